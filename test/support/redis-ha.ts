import { setTimeout as sleep } from 'node:timers/promises'
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freePort } from './gateway'

/**
 * Highly available Redis topologies of real processes on loopback, each in its own temporary folder on free ports:
 * a Sentinel topology (a primary, a replica, three sentinels: `redis-server <conf> --sentinel`, the binary Debian's
 * redis-sentinel is), a six-node Redis Cluster (`redis-cli --cluster create`), and a TLS server with a private CA and
 * an ACL user. Failure detection is made short by configuration (a node is down after 1 s), never slept through.
 */

/** One redis-server process (or sentinel) of a topology. */
export interface RedisProcess {
  port: number
  /** SIGKILL: nothing saved, as in a crash. */
  kill: () => Promise<void>
  alive: () => boolean
}

/** `redis-cli` against a loopback port: its output, trimmed (throws on a non-zero exit). */
export function redisCli(port: number, ...args: string[]): string {
  const run = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8', timeout: 60_000 })
  if (run.status !== 0) throw new Error(`redis-cli -p ${port} ${args.join(' ')}: ${run.stderr || run.stdout}`)
  return run.stdout.trim()
}

/** `redis-cli` that answers undefined rather than throwing (a node that is down). */
function tryCli(port: number, ...args: string[]): string | undefined {
  try {
    return redisCli(port, ...args)
  }
  catch {
    return undefined
  }
}

const execFileAsync = promisify(execFile)

/**
 * `redis-cli` that leaves this process free meanwhile (undefined when it fails): for the polls that run while a failover
 * is under way, when the development provider and the echo backend of this same process must go on answering the
 * gateways (a poll of six blocking calls every 100 ms held their answers back by seconds on a loaded machine).
 */
async function cliWithoutBlocking(port: number, ...args: string[]): Promise<string | undefined> {
  try {
    return (await execFileAsync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8', timeout: 60_000 })).stdout.trim()
  }
  catch {
    return undefined
  }
}

/** Polls `check` every 100 ms until it holds, or throws `what` past `timeoutMs`. */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`)
    await sleep(100)
  }
}

/** Starts redis-server with a config file of `lines` (and `extra` arguments), once its port answers PING. */
async function spawnServer(dir: string, name: string, lines: string[], extra: string[] = [], ping = (port: number) => tryCli(port, 'PING') === 'PONG', fixedPort?: number): Promise<RedisProcess> {
  for (let attempt = 1; ; attempt++) {
    const port = fixedPort ?? await freePort()
    const folder = join(dir, `${name}-${port}`)
    mkdirSync(folder, { recursive: true })
    const conf = join(folder, 'redis.conf')
    writeFileSync(conf, [`port ${port}`, 'bind 127.0.0.1', `dir ${folder}`, 'save ""', 'appendonly no', `logfile ${join(folder, 'log')}`, ...lines.map(line => line.replaceAll('{port}', String(port)))].join('\n'))
    const child: ChildProcess = spawn('redis-server', [conf, ...extra], { stdio: 'ignore' })
    child.once('error', () => undefined)
    const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
    const alive = () => child.exitCode === null && child.signalCode === null
    const started = await until(() => !alive() || ping(port), `${name} on ${port}`, 10_000).then(() => alive(), () => false)
    if (started) {
      return {
        port,
        alive,
        kill: async () => {
          if (alive()) child.kill('SIGKILL')
          await exited
        },
      }
    }
    child.kill('SIGKILL')
    if (attempt === 5 || fixedPort !== undefined) throw new Error(`${name} did not start (is the Debian redis-server package installed?)`)
  }
}

export interface SentinelTopology {
  /** APP_REDIS_SENTINELS and APP_REDIS_SENTINEL_NAME. */
  env: { APP_REDIS_SENTINELS: string, APP_REDIS_SENTINEL_NAME: string }
  name: string
  sentinels: RedisProcess[]
  /** The data nodes (the first is the primary at start). */
  nodes: RedisProcess[]
  /** The port the sentinels name as primary now. */
  primaryPort: () => number | undefined
  /** Kills the primary (SIGKILL) and resolves once the sentinels name the replica in its place. */
  failover: () => Promise<{ from: number, to: number }>
  /** Starts every killed data node again on its port (empty); resolves once the sentinels made each a replica in sync. */
  revive: () => Promise<void>
  stop: () => Promise<void>
}

/** One primary, one replica, three sentinels (quorum 2; down after 1 s, failover timeout 3 s). */
export async function startSentinelTopology(name = 'mymaster'): Promise<SentinelTopology> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-sentinel-'))
  const primary = await spawnServer(dir, 'primary', [])
  const replica = await spawnServer(dir, 'replica', [`replicaof 127.0.0.1 ${primary.port}`])
  await until(() => /master_link_status:up/.test(tryCli(replica.port, 'INFO', 'replication') ?? ''), 'the replica in sync')
  const sentinels = await Promise.all([1, 2, 3].map(n => spawnServer(dir, `sentinel${n}`, [
    `sentinel monitor ${name} 127.0.0.1 ${primary.port} 2`,
    `sentinel down-after-milliseconds ${name} 1000`,
    `sentinel failover-timeout ${name} 3000`,
    `sentinel parallel-syncs ${name} 1`,
  ], ['--sentinel'])))
  const primaryPort = () => {
    for (const sentinel of sentinels.filter(s => s.alive())) {
      const answer = tryCli(sentinel.port, 'SENTINEL', 'get-master-addr-by-name', name)?.split('\n')
      if (answer?.[1]) return Number(answer[1])
    }
    return undefined
  }
  // Every sentinel sees the replica and the other sentinels before a failover is asked of them.
  await until(() => sentinels.every(s => /num-other-sentinels\n2\b/.test(tryCli(s.port, 'SENTINEL', 'master', name) ?? '')
    && /num-slaves\n1\b/.test(tryCli(s.port, 'SENTINEL', 'master', name) ?? '')), 'the sentinels know each other and the replica')
  const nodes = [primary, replica]
  return {
    env: { APP_REDIS_SENTINELS: sentinels.map(s => `127.0.0.1:${s.port}`).join(','), APP_REDIS_SENTINEL_NAME: name },
    name,
    sentinels,
    nodes,
    primaryPort,
    async failover() {
      const from = primaryPort()!
      await nodes.find(node => node.port === from)!.kill()
      await until(async () => {
        const answers = await Promise.all(sentinels.filter(s => s.alive()).map(s => cliWithoutBlocking(s.port, 'SENTINEL', 'get-master-addr-by-name', name)))
        const named = answers.map(answer => Number(answer?.split('\n')[1])).find(port => port > 0)
        return named !== undefined && named !== from && (await cliWithoutBlocking(named, 'ROLE'))?.startsWith('master') === true
      }, 'the sentinels promote the replica')
      return { from, to: primaryPort()! }
    },
    async revive() {
      for (const [i, node] of nodes.entries()) {
        if (node.alive()) continue
        nodes[i] = await spawnServer(dir, 'revived', [], [], undefined, node.port)
        // The sentinels see it answer again and turn it into a replica of the primary they name.
        await until(() => /master_link_status:up/.test(tryCli(node.port, 'INFO', 'replication') ?? ''), `${node.port} a replica in sync again`)
        await until(() => sentinels.every(s => new RegExp(`port\n${node.port}\n[^]*?flags\nslave\n`).test(tryCli(s.port, 'SENTINEL', 'replicas', name) ?? '')), `the sentinels see ${node.port} as a live replica`)
      }
    },
    async stop() {
      await Promise.all([...sentinels, ...nodes].map(node => node.kill()))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export interface RedisCluster {
  /** APP_REDIS_CLUSTER_NODES (every node). */
  env: { APP_REDIS_CLUSTER_NODES: string }
  nodes: RedisProcess[]
  /** The node ids and ports of the primaries now, with their slot ranges. */
  primaries: () => { id: string, port: number, slots: string }[]
  /** The primary serving `slot` now, if one does. */
  owner: (slot: number) => { id: string, port: number, slots: string } | undefined
  /** Kills the primary that serves `slot` (SIGKILL) and resolves once its replica serves the slot and the cluster is ok. */
  failSlotPrimary: (slot: number) => Promise<{ from: number, to: number }>
  /** Moves `slot` (with its keys) to another primary: CLUSTER SETSLOT IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE. */
  moveSlot: (slot: number) => Promise<{ from: number, to: number }>
  stop: () => Promise<void>
}

/** The cluster's view from a live node: `CLUSTER NODES` lines. */
function clusterNodes(nodes: RedisProcess[]): ClusterNode[] {
  return parseClusterNodes(tryCli(nodes.find(n => n.alive())!.port, 'CLUSTER', 'NODES'))
}

interface ClusterNode { id: string, port: number, master: boolean, failed: boolean, slots: string }

/** `CLUSTER NODES` lines read. */
function parseClusterNodes(text: string | undefined): ClusterNode[] {
  return (text ?? '').split('\n').filter(Boolean).map((line) => {
    const [id, address, flags, , , , , , ...slots] = line.split(' ')
    return { id: id!, port: Number(/:(\d+)@/.exec(address!)?.[1]), master: flags!.includes('master'), failed: flags!.includes('fail'), slots: slots.join(' ') }
  })
}

const slotServedBy = (slots: string, slot: number) => slots.split(' ').some((range) => {
  const [from, to = from] = range.split('-').map(Number)
  return !range.startsWith('[') && slot >= from! && slot <= to!
})

/** Six nodes, three primaries with a replica each; a node is failed after 1 s (cluster-node-timeout). */
export async function startRedisCluster(): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cluster-'))
  const nodes = await Promise.all(Array.from({ length: 6 }, (_, n) => spawnServer(dir, `node${n}`, [
    'cluster-enabled yes', 'cluster-config-file nodes.conf', 'cluster-node-timeout 1000', 'cluster-replica-validity-factor 0',
  ])))
  redisCli(nodes[0]!.port, '--cluster', 'create', ...nodes.map(n => `127.0.0.1:${n.port}`), '--cluster-replicas', '1', '--cluster-yes')
  // Polled during a failover or a move too: without blocking (cliWithoutBlocking), as ownerNow below.
  const clusterOk = async () => (await Promise.all(nodes.filter(n => n.alive()).map(n => cliWithoutBlocking(n.port, 'CLUSTER', 'INFO')))).every(info => /cluster_state:ok/.test(info ?? ''))
  await until(clusterOk, 'the cluster is ok on every node')
  // cluster_state:ok comes before the replicas' first sync: a failover before it would lose what the test wrote.
  const inSync = () => nodes.filter(n => /master_link_status:up/.test(tryCli(n.port, 'INFO', 'replication') ?? '')).length === 3
  await until(inSync, 'every replica in sync with its primary')
  const primaries = () => clusterNodes(nodes).filter(n => n.master && !n.failed && n.slots)
  const owner = (slot: number) => primaries().find(p => slotServedBy(p.slots, slot))
  const ownerNow = async (slot: number) => parseClusterNodes(await cliWithoutBlocking(nodes.find(n => n.alive())!.port, 'CLUSTER', 'NODES'))
    .find(n => n.master && !n.failed && slotServedBy(n.slots, slot))
  return {
    env: { APP_REDIS_CLUSTER_NODES: nodes.map(n => `127.0.0.1:${n.port}`).join(',') },
    nodes,
    primaries,
    owner,
    async failSlotPrimary(slot) {
      const from = owner(slot)!.port
      await nodes.find(n => n.port === from)!.kill()
      // One view of the cluster a check (two calls may read two nodes' views, not yet the same during the failover).
      let to: number | undefined
      await until(async () => {
        to = (await ownerNow(slot))?.port
        return await clusterOk() && to !== undefined && to !== from
      }, `slot ${slot} served by a promoted replica`)
      return { from, to: to! }
    },
    async moveSlot(slot) {
      const source = owner(slot)!
      const target = primaries().find(p => p.port !== source.port)!
      redisCli(target.port, 'CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', source.id)
      redisCli(source.port, 'CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', target.id)
      for (;;) {
        const keys = redisCli(source.port, 'CLUSTER', 'GETKEYSINSLOT', String(slot), '100').split('\n').filter(Boolean)
        if (!keys.length) break
        redisCli(source.port, 'MIGRATE', '127.0.0.1', String(target.port), '', '0', '5000', 'KEYS', ...keys)
      }
      for (const node of primaries()) redisCli(node.port, 'CLUSTER', 'SETSLOT', String(slot), 'NODE', target.id)
      await until(async () => await clusterOk() && (await ownerNow(slot))?.port === target.port, `slot ${slot} moved`)
      return { from: source.port, to: target.port }
    },
    async stop() {
      await Promise.all(nodes.map(node => node.kill()))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Redis Cluster's slot of a key (CRC16-XMODEM of its hash tag, mod 16384). */
export function keySlot(key: string): number {
  const open = key.indexOf('{')
  const close = open < 0 ? -1 : key.indexOf('}', open + 1)
  const hashed = Buffer.from(close > open + 1 ? key.slice(open + 1, close) : key)
  let crc = 0
  for (const byte of hashed) {
    crc ^= byte << 8
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xFFFF : (crc << 1) & 0xFFFF
  }
  return crc % 16384
}

export interface TlsRedis {
  port: number
  /** The CA's certificate file (APP_REDIS_TLS_CA). */
  caFile: string
  /** The ACL user's rediss:// address (APP_REDIS_URL). */
  url: string
  /** An admin's redis-cli arguments for this server (TLS, the default user's password). */
  cli: (...args: string[]) => string
  stop: () => Promise<void>
}

/** The rights of docs/operations.md's ACL line for the gateway's Redis user (what follows `user gateway on >PASSWORD`). */
export function documentedAclRule(): string {
  const rule = /^user gateway on >PASSWORD (.+)$/m.exec(readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8'))?.[1]
  if (!rule) throw new Error('docs/operations.md has no line `user gateway on >PASSWORD ...`')
  return rule
}

/**
 * A redis-server speaking TLS only, its certificate signed by a private CA made here with openssl (for 127.0.0.1),
 * with an ACL user `gateway` allowed `aclRule` (an ACL rule line's rights) and the default user behind a password.
 */
export async function startTlsRedis(aclRule: string, password: string): Promise<TlsRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-tls-'))
  const ssl = (...args: string[]) => {
    const run = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' })
    if (run.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${run.stderr}`)
  }
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=svc test Redis CA')
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1')
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n')
  ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '1', '-extfile', 'san.ext')
  const admin = 'admin-only-password-0123'
  const tlsArgs = (port: number) => ['--tls', '--cacert', join(dir, 'ca.pem'), '-h', '127.0.0.1', '-p', String(port), '--user', 'default', '--pass', admin, '--no-auth-warning']
  const cli = (port: number, ...args: string[]) => {
    const run = spawnSync('redis-cli', [...tlsArgs(port), ...args], { encoding: 'utf8', timeout: 10_000 })
    if (run.status !== 0) throw new Error(run.stderr)
    return run.stdout.trim()
  }
  const server = await spawnServer(dir, 'tls', [
    'port 0', 'tls-port {port}',
    `tls-cert-file ${join(dir, 'server.pem')}`, `tls-key-file ${join(dir, 'server.key')}`, `tls-ca-cert-file ${join(dir, 'ca.pem')}`,
    'tls-auth-clients no',
    `user default on >${admin} ~* &* +@all`,
    `user gateway on >${password} ${aclRule}`,
  ], [], port => (() => {
    try {
      return cli(port, 'PING') === 'PONG'
    }
    catch {
      return false
    }
  })())
  return {
    port: server.port,
    caFile: join(dir, 'ca.pem'),
    url: `rediss://gateway:${encodeURIComponent(password)}@127.0.0.1:${server.port}`,
    cli: (...args) => cli(server.port, ...args),
    async stop() {
      await server.kill()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
