// @ts-check
/**
 * The soak's Sentinel topology (`--redis sentinel`): a primary and a replica (redis-server, no persistence: the
 * replica holds the data) and three sentinels (`redis-server <conf> --sentinel`, the binary Debian's redis-sentinel
 * is), quorum 2, a primary down after 1 s. `failover()` kills the primary (SIGKILL) and resolves once the sentinels
 * name the replica in its place and it answers; the killed one is then started again on its port, and the sentinels
 * make it the new primary's replica.
 */
import { execFile, spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'

const NAME = 'soakprimary'
/** The latency check's room after a failover: its 5 s and one 3 s window, and a little more. */
const REVIVE_AFTER_MS = 10_000
const sleep = (/** @type {number} */ ms) => new Promise(resolve => setTimeout(resolve, ms))
/**
 * redis-cli's answer, or '' when the server does not answer. Asynchronous: the load runs in this process, and a
 * blocking call would hold its requests (and count as the gateways' latency).
 */
const cli = (/** @type {number} */ port, /** @type {string[]} */ ...args) => promisify(execFile)('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8', timeout: 5_000 }).then(out => out.stdout.trim(), () => '')

async function until(/** @type {() => Promise<boolean>} */ check, /** @type {string} */ what, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs / 1000} s: ${what}`)
    await sleep(100)
  }
}

/**
 * @param {{ dir: string, ports: number[] }} options five free ports: primary, replica, three sentinels
 */
export async function startSentinelRedis({ dir, ports }) {
  const [primaryPort, replicaPort, ...sentinelPorts] = ports
  /** @type {Map<number, import('node:child_process').ChildProcess>} */
  const children = new Map()
  const start = async (/** @type {number} */ port, /** @type {string[]} */ lines, sentinel = false) => {
    const folder = join(dir, String(port))
    mkdirSync(folder, { recursive: true })
    const conf = join(folder, 'redis.conf')
    writeFileSync(conf, [`port ${port}`, 'bind 127.0.0.1', `dir ${folder}`, 'save ""', 'appendonly no', `logfile ${join(folder, 'log')}`, ...lines].join('\n'))
    const child = spawn('redis-server', sentinel ? [conf, '--sentinel'] : [conf], { stdio: 'ignore' })
    child.once('error', () => {})
    children.set(port, child)
    await until(async () => await cli(port, 'PING') === 'PONG', `redis-server on ${port} (is the Debian package installed?)`, 10_000)
  }
  await start(primaryPort, [])
  await start(replicaPort, [`replicaof 127.0.0.1 ${primaryPort}`])
  await until(async () => /master_link_status:up/.test(await cli(replicaPort, 'INFO', 'replication')), 'the replica in sync')
  for (const port of sentinelPorts) {
    await start(port, [`sentinel monitor ${NAME} 127.0.0.1 ${primaryPort} 2`, `sentinel down-after-milliseconds ${NAME} 1000`, `sentinel failover-timeout ${NAME} 3000`], true)
  }
  const primary = async () => Number((await cli(sentinelPorts[0], 'SENTINEL', 'get-master-addr-by-name', NAME)).split('\n')[1] ?? 0)
  await until(async () => (await Promise.all(sentinelPorts.map(port => cli(port, 'SENTINEL', 'master', NAME)))).every(text => /num-other-sentinels\n2\n/.test(text) && /num-slaves\n1\n/.test(text)), 'the sentinels know each other and the replica')
  const kill = async (/** @type {number} */ port) => {
    const child = children.get(port)
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise(resolve => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
  }
  return {
    env: { APP_REDIS_SENTINELS: sentinelPorts.map(port => `127.0.0.1:${port}`).join(','), APP_REDIS_SENTINEL_NAME: NAME },
    describe: `Redis Sentinel: a primary and a replica (ports ${primaryPort}, ${replicaPort}), three sentinels (${sentinelPorts.join(', ')}), down after 1 s`,
    /** Kills the primary; resolves with the new primary's port once it answers as primary (Redis answers again then). */
    async failover() {
      const from = await primary()
      await kill(from)
      await until(async () => {
        const now = await primary()
        return now !== from && (await cli(now, 'ROLE')).startsWith('master')
      }, 'the sentinels promote the replica')
      return { from, to: await primary() }
    },
    /**
     * Starts a killed node again on its port, REVIVE_AFTER_MS after the failover (its start and full sync take CPU the
     * latency check would count against the gateways); resolves once it is the primary's replica, in sync.
     */
    async revive(/** @type {number} */ port) {
      await sleep(REVIVE_AFTER_MS)
      await start(port, [])
      await until(async () => /master_link_status:up/.test(await cli(port, 'INFO', 'replication')), `${port} a replica in sync again`)
    },
    stop: async () => {
      for (const port of children.keys()) await kill(port)
    },
  }
}
