// @ts-check
/**
 * Puts the soak's faults on (soak/schedule.mjs says when, and what each explains), each through a knob of a
 * neighbour: the development IAM's scenario, the soak backend's `faults`, the redis-server process, the load's mode and
 * rotation, a gateway instance's process. Records each fault's real window.
 */
import { faultPlan, faultSeconds, redisDownSeconds, RESTARTED } from './schedule.mjs'

const sleep = (/** @type {number} */ ms) => new Promise(resolve => setTimeout(resolve, ms))
/** A killed primary being started again as a replica (awaited before the next fault). */
let reviving = /** @type {Promise<void> | undefined} */ (undefined)

/**
 * @typedef {object} Neighbours
 * @property {{ state: { scenario: string } }} iam the development IAM
 * @property {{ faults: { reset: boolean, slowMs: number } }} backend
 * @property {{ crash?: () => Promise<void>, start?: (options?: { empty?: boolean }) => Promise<void>,
 *   failover?: () => Promise<{ from: number, to: number }>, revive?: (port: number) => Promise<void> }} redis
 *   a redis-server that crashes and starts again, or a Sentinel topology whose primary fails over
 * @property {{ mode: { abortUploads: boolean, slowReaders: boolean }, rotation: Set<string> }} load
 * @property {Map<string, { stop: () => Promise<number | null>, start: () => Promise<void> }>} gateways
 */

/**
 * Holds a fault on for `seconds` (or, for a crash or a restart, until the neighbour is back).
 * @param {import('./schedule.mjs').FaultKind} kind
 * @param {number} seconds
 * @param {Neighbours} n
 * @param {number} redisDown seconds Redis stays down
 * @returns {Promise<string | undefined>} a note for the report (a restart's exit code and time)
 */
async function holdFault(kind, seconds, n, redisDown) {
  const during = async (/** @type {() => void} */ on, /** @type {() => void} */ off) => {
    on()
    await sleep(seconds * 1000)
    off()
  }
  switch (kind) {
    case 'iam-stall': return void await during(() => (n.iam.state.scenario = 'slow'), () => (n.iam.state.scenario = 'normal'))
    case 'iam-5xx': return void await during(() => (n.iam.state.scenario = 'html'), () => (n.iam.state.scenario = 'normal'))
    case 'backend-reset': return void await during(() => (n.backend.faults.reset = true), () => (n.backend.faults.reset = false))
    case 'backend-slow': return void await during(() => (n.backend.faults.slowMs = 1500), () => (n.backend.faults.slowMs = 0))
    case 'upload-abort': return void await during(() => (n.load.mode.abortUploads = true), () => (n.load.mode.abortUploads = false))
    case 'slow-readers': return void await during(() => (n.load.mode.slowReaders = true), () => (n.load.mode.slowReaders = false))
    case 'redis-restart':
    case 'redis-empty':
      await n.redis.crash?.()
      await sleep(redisDown * 1000)
      return void await n.redis.start?.({ empty: kind === 'redis-empty' })
    case 'redis-failover': {
      // Ends once the promoted replica answers as primary; the killed one is started again after the window.
      const { from, to } = await /** @type {NonNullable<Neighbours['redis']['failover']>} */ (n.redis.failover)()
      reviving = n.redis.revive?.(from)
      return `primary ${from} killed, ${to} promoted`
    }
    case 'restart': {
      const gateway = n.gateways.get(RESTARTED)
      if (!gateway) throw new Error(`no instance ${RESTARTED}`)
      // Out of rotation a second before SIGTERM (a balancer's pre-stop pause); back in once its /readyz says 200.
      n.load.rotation.delete(RESTARTED)
      await sleep(1000)
      const stopped = Date.now()
      const code = await gateway.stop()
      const drained = Date.now() - stopped
      await gateway.start()
      n.load.rotation.add(RESTARTED)
      return `exit ${code} after a ${(drained / 1000).toFixed(1)} s drain, ready again ${((Date.now() - stopped - drained) / 1000).toFixed(1)} s later`
    }
  }
}

/**
 * Runs every fault of a run of `runSeconds` at its time, one after another; resolves with their windows (ms from
 * `origin`) once the last has ended. `afterRestart` runs once the restarted instance is back (the warm-up's end).
 * @param {{ runSeconds: number, origin: number, neighbours: Neighbours, log: (line: string) => void, afterRestart: () => Promise<void>, redis?: import('./schedule.mjs').RedisTopology }} options
 */
export async function runFaults({ runSeconds, origin, neighbours, log, afterRestart, redis = 'standalone' }) {
  /** @type {(import('./schedule.mjs').FaultWindow & { note?: string })[]} */
  const windows = []
  const seconds = faultSeconds(runSeconds)
  for (const { kind, at } of faultPlan(runSeconds, redis)) {
    const wait = origin + at * 1000 - Date.now()
    if (wait > 0) await sleep(wait)
    await reviving
    const start = Date.now() - origin
    log(`fault ${kind} at ${(start / 1000).toFixed(0)} s`)
    const note = await holdFault(kind, seconds, neighbours, redisDownSeconds(runSeconds))
    windows.push({ kind, start, end: Date.now() - origin, ...(note ? { note } : {}) })
    if (kind === 'restart') await afterRestart()
  }
  await reviving
  return windows
}
