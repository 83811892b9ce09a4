import { createServer, connect, type Socket } from 'node:net'
import { redisCli, until, type RedisCluster } from './redis-ha'

/**
 * A loopback TCP proxy in front of each node of a Redis Cluster, which the nodes announce as their address
 * (`cluster-announce-port`): clients find the cluster through it, and a test can disturb a command on the way. Two
 * faults, each making the client see a connection closed (ioredis then sends the command again): the first matching
 * command's answer lost after Redis carried it out (a node restarted, a failover's kill), or every matching command
 * for a while cut off from its client and carried out at the end of it all the same (a network cut whose packets
 * still arrive). Each node's cluster bus stays on its own port.
 */
export interface ClusterProxies {
  /** APP_REDIS_CLUSTER_NODES through the proxies. */
  env: { APP_REDIS_CLUSTER_NODES: string }
  /** Watches the commands whose bytes match `command` (one command's RESP, on any node) from now on (see Watch). */
  watch: (command: RegExp, fault?: { loseFirstAnswer?: true, cutForMs?: number }) => Watch
  close: () => Promise<void>
}

export interface Watch {
  /** Each matching command's bytes, as seen. */
  seen: string[]
  /** With `loseFirstAnswer`: the first one's bytes, once Redis answered it and the client's connection was closed. */
  lost: Promise<string>
  /**
   * With `cutForMs`: each matching command in that many ms from the first one has its client's connection closed at
   * once and is sent on to Redis when the time is up; the first one's bytes, once sent on.
   */
  sentOn: Promise<string>
}

type Watching = Watch & { command: RegExp, lose: boolean, cutMs?: number, cutUntil?: number, losing: (command: string) => void, sent: (command: string) => void }

/** A promise and its resolve function. */
function settled<T>(): [Promise<T>, (value: T) => void] {
  let resolve!: (value: T) => void
  return [new Promise<T>((done) => {
    resolve = done
  }), resolve]
}

export async function proxyCluster(cluster: RedisCluster): Promise<ClusterProxies> {
  const watches: Watching[] = []
  const sockets = new Set<Socket>()
  const servers = await Promise.all(cluster.nodes.map(node => new Promise<{ port: number, close: () => Promise<void> }>((resolve) => {
    const server = createServer((client) => {
      const upstream = connect(node.port, '127.0.0.1')
      let losing: (() => void) | undefined
      /** The client is cut off: its upstream connection still carries what it sent. */
      let cut = false
      for (const socket of [client, upstream]) {
        sockets.add(socket)
        socket.on('error', () => undefined)
        socket.on('close', () => {
          sockets.delete(socket)
          if (cut && socket === client) return
          client.destroy()
          upstream.destroy()
        })
      }
      client.on('data', (chunk: Buffer) => {
        // Commands arrive as RESP arrays (`*3\r\n$3\r\nset\r\n...`), several in a chunk when pipelined.
        for (const watch of watches) {
          for (const [command] of chunk.toString('latin1').matchAll(new RegExp(watch.command.source, `${watch.command.flags}g`))) {
            watch.seen.push(command)
            if (watch.lose) {
              watch.lose = false
              losing = () => watch.losing(command)
            }
            if (watch.cutMs !== undefined) watch.cutUntil ??= Date.now() + watch.cutMs
            if (!cut && watch.cutUntil !== undefined && Date.now() < watch.cutUntil) {
              cut = true
              client.destroy()
              setTimeout(() => {
                upstream.write(chunk)
                watch.sent(command)
              }, watch.cutUntil - Date.now())
            }
          }
        }
        if (!cut) upstream.write(chunk)
      })
      upstream.on('data', (answer) => {
        if (cut) {
          upstream.destroy() // its answer, which nobody reads
          return
        }
        if (!losing) {
          client.write(answer)
          return
        }
        // Redis has carried the command out and answered: the client never reads it.
        client.destroy()
        losing()
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
    watch(command, fault = {}) {
      const [lost, losing] = settled<string>()
      const [sentOn, sent] = settled<string>()
      const watch: Watching = { command, lose: !!fault.loseFirstAnswer, cutMs: fault.cutForMs, seen: [], lost, losing, sentOn, sent }
      watches.push(watch)
      return watch
    },
    async close() {
      for (const socket of sockets) socket.destroy()
      await Promise.all(servers.map(server => server.close()))
    },
  }
}
