import { createServer, connect, type Socket } from 'node:net'
import { redisCli, until, type RedisCluster } from './redis-ha'

/**
 * A loopback TCP proxy in front of each node of a Redis Cluster, which the nodes announce as their address
 * (`cluster-announce-port`): clients find the cluster through it, and a test can lose one answer on the way back. That
 * is a connection that closes after Redis carried out a command and before its client read the answer (a node
 * restarted, a network cut, a failover's kill): ioredis then sends the command again, which a test can watch meet the
 * first one's effect. Each node's cluster bus stays on its own port.
 */
export interface ClusterProxies {
  /** APP_REDIS_CLUSTER_NODES through the proxies. */
  env: { APP_REDIS_CLUSTER_NODES: string }
  /**
   * The commands whose bytes match `command` (one command's RESP; any node) from now on: `seen`, each command's bytes.
   * With `loseFirstAnswer`, the first is carried out and its answer lost (the connection closed before the client has
   * it): `lost`, that command's bytes, once lost.
   */
  watch: (command: RegExp, options?: { loseFirstAnswer?: boolean }) => Watch
  close: () => Promise<void>
}

export interface Watch {
  seen: string[]
  lost: Promise<string>
}

export async function proxyCluster(cluster: RedisCluster): Promise<ClusterProxies> {
  const watches: (Watch & { command: RegExp, lose: boolean, losing: (command: string) => void })[] = []
  const sockets = new Set<Socket>()
  const servers = await Promise.all(cluster.nodes.map(node => new Promise<{ port: number, close: () => Promise<void> }>((resolve) => {
    const server = createServer((client) => {
      const upstream = connect(node.port, '127.0.0.1')
      let losing: { command: string, by: (command: string) => void } | undefined
      for (const socket of [client, upstream]) {
        sockets.add(socket)
        socket.on('error', () => undefined)
        socket.on('close', () => {
          sockets.delete(socket)
          client.destroy()
          upstream.destroy()
        })
      }
      client.on('data', (chunk) => {
        // Commands arrive as RESP arrays (`*3\r\n$3\r\nset\r\n...`), several in a chunk when pipelined.
        for (const watch of watches) {
          for (const [command] of chunk.toString('latin1').matchAll(new RegExp(watch.command.source, `${watch.command.flags}g`))) {
            watch.seen.push(command)
            if (!watch.lose) continue
            watch.lose = false
            losing = { command, by: watch.losing }
          }
        }
        upstream.write(chunk)
      })
      upstream.on('data', (answer) => {
        if (losing === undefined) {
          client.write(answer)
          return
        }
        // Redis has carried the command out and answered: the client never reads it.
        client.destroy()
        losing.by(losing.command)
      })
    })
    server.listen(0, '127.0.0.1', () => resolve({
      port: (server.address() as { port: number }).port,
      close: () => new Promise<void>(done => server.close(() => done())),
    }))
  })))
  // Each node announces its proxy; the nodes' views agree once every node's CLUSTER SLOTS names proxies only.
  cluster.nodes.forEach((node, n) => {
    redisCli(node.port, 'CONFIG', 'SET', 'cluster-announce-bus-port', String(node.port + 10_000))
    redisCli(node.port, 'CONFIG', 'SET', 'cluster-announce-port', String(servers[n]!.port))
  })
  const proxyPorts = new Set(servers.map(server => String(server.port)))
  const realPorts = cluster.nodes.map(node => String(node.port))
  await until(() => cluster.nodes.every((node) => {
    const slots = redisCli(node.port, 'CLUSTER', 'SLOTS')
    return !realPorts.some(port => slots.split('\n').includes(port)) && [...proxyPorts].every(port => slots.split('\n').includes(port))
  }), 'every node announcing its proxy', 15_000)
  return {
    env: { APP_REDIS_CLUSTER_NODES: servers.map(server => `127.0.0.1:${server.port}`).join(',') },
    watch(command, { loseFirstAnswer = false } = {}) {
      let losing!: (command: string) => void
      const lost = new Promise<string>((resolve) => {
        losing = resolve
      })
      const watch = { command, lose: loseFirstAnswer, seen: [], lost, losing }
      watches.push(watch)
      return watch
    },
    async close() {
      for (const socket of sockets) socket.destroy()
      await Promise.all(servers.map(server => server.close()))
    },
  }
}
