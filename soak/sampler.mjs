// @ts-check
/**
 * Samples every gateway process while the soak runs: resident memory and open descriptors from /proc/<pid>, the V8
 * heap in use and the open streams and tunnels from its /metrics, and its connections to the backend that sit in
 * the proxy's pool (ESTABLISHED in /proc/net/tcp, owned by one of its socket descriptors, not a WebSocket tunnel).
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'

/**
 * @typedef {object} Sample
 * @property {number} t ms from the run's start
 * @property {string} instance
 * @property {number} pid
 * @property {number} rssMiB VmRSS
 * @property {number} fds entries of /proc/<pid>/fd
 * @property {number} [heapMiB] svc_gateway_nodejs_heap_size_used_bytes
 * @property {number} [oldMiB] svc_gateway_nodejs_heap_space_size_used_bytes{space="old"}: V8's old space in use
 * @property {number} [youngMiB] the young generation in use (spaces "new" and "new_large_object"): what a scavenge
 *   empties, so that the heap less it moves only when objects are promoted or a mark-compact runs
 * @property {number} [majorGcs] svc_gateway_nodejs_gc_duration_seconds_count{kind="major"}: mark-compacts so far
 * @property {number} [streams] svc_gateway_open_streams
 * @property {number} [tunnels] svc_gateway_open_tunnels
 * @property {number} pool established connections to the backend that are not tunnels
 */

/**
 * The samples that first follow a mark-compact of the same process (its count went up since the one before): their
 * old space is what the collector kept, which garbage does not move. `samples`: one process's, in order.
 * @param {Sample[]} samples
 */
export function afterMarkCompacts(samples) {
  return samples.filter((s, i) => i > 0 && s.oldMiB !== undefined && (s.majorGcs ?? 0) > (samples[i - 1]?.majorGcs ?? Number.POSITIVE_INFINITY))
}

/** The socket inodes a process holds open. */
function socketInodes(/** @type {number} */ pid) {
  const inodes = new Set()
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))
      if (match) inodes.add(match[1])
    }
    catch {
      // closed meanwhile
    }
  }
  return inodes
}

/** ESTABLISHED IPv4 connections to a port: the local port and the inode of each. */
function connectionsTo(/** @type {number} */ port) {
  const remote = `:${port.toString(16).toUpperCase().padStart(4, '0')}`
  return readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1).flatMap((line) => {
    const [, local, rem, state, , , , , , inode] = line.trim().split(/\s+/)
    return state === '01' && rem?.endsWith(remote) ? [{ localPort: Number.parseInt(local.split(':')[1], 16), inode }] : []
  })
}

/** A few gauges from Prometheus text. */
function gauges(/** @type {string} */ text) {
  const read = (/** @type {string} */ name) => {
    const value = new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]
    return value === undefined ? undefined : Number(value)
  }
  const mib = (/** @type {number | undefined} */ bytes) => (bytes === undefined ? undefined : bytes / 2 ** 20)
  /** The new space with its large objects; unknown without the new space. */
  const sum = (/** @type {number | undefined} */ space, /** @type {number | undefined} */ large) => (space === undefined ? undefined : space + (large ?? 0))
  return {
    heapMiB: mib(read('svc_gateway_nodejs_heap_size_used_bytes')),
    oldMiB: mib(read('svc_gateway_nodejs_heap_space_size_used_bytes\\{space="old"\\}')),
    youngMiB: mib(sum(read('svc_gateway_nodejs_heap_space_size_used_bytes\\{space="new"\\}'), read('svc_gateway_nodejs_heap_space_size_used_bytes\\{space="new_large_object"\\}'))),
    majorGcs: read('svc_gateway_nodejs_gc_duration_seconds_count\\{kind="major"\\}'),
    streams: read('svc_gateway_open_streams'),
    tunnels: read('svc_gateway_open_tunnels'),
  }
}

/**
 * @param {{ instances: { name: string, pid: () => number | undefined, metricsUrl: string }[],
 *   backend: { port: number, isTunnelPort: (port: number) => boolean }, origin: number, everyMs: number }} options
 */
export function startSampler({ instances, backend, origin, everyMs }) {
  /** @type {Sample[]} */
  const samples = []

  /** One sample of every instance that runs now (kept, and returned). */
  async function sampleNow() {
    const t = Date.now() - origin
    /** @type {Sample[]} */
    const taken = []
    const connections = connectionsTo(backend.port)
    await Promise.all(instances.map(async (instance) => {
      const pid = instance.pid()
      if (!pid) return
      try {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8')
        const rssMiB = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024
        const fds = readdirSync(`/proc/${pid}/fd`).length
        const inodes = socketInodes(pid)
        const pool = connections.filter(c => inodes.has(c.inode) && !backend.isTunnelPort(c.localPort)).length
        const metrics = await fetch(instance.metricsUrl, { signal: AbortSignal.timeout(2000) }).then(r => r.text()).then(gauges, () => ({}))
        taken.push({ t, instance: instance.name, pid, rssMiB, fds, pool, ...metrics })
      }
      catch {
        // the process ended between its pid and its files (a restart)
      }
    }))
    samples.push(...taken)
    return taken
  }

  let stopped = false
  let timer = setTimeout(function tick() {
    void sampleNow().finally(() => {
      if (!stopped) timer = setTimeout(tick, everyMs)
    })
  }, 0)
  return {
    samples,
    sampleNow,
    stop: () => {
      stopped = true
      clearTimeout(timer)
    },
  }
}
