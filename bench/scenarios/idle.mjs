// @ts-check
/**
 * /api/** with the idle timeout on (issue 41, item 1: "within 3% of off"): two gateways as shipped (access log,
 * metrics listener, Redis revocations), one with APP_SESSION_IDLE_TIMEOUT=30, loaded with the same ~3.5 KB session
 * cookie (sealed by the one with the timeout, so it carries a last-seen time, which the other opens as well).
 * Standalone interleaved rounds, then head to head. Within the run no re-seal is due (a quarter of 30 minutes): what
 * is measured is the per-request check, one comparison; a re-seal comes once a quarter of the window a session.
 */
import { comparePaths } from '../load.mjs'
import { log } from '../setup.mjs'
import { pathRow } from '../table.mjs'

const OFF = 'gateway /api/** as shipped, idle timeout off'
const ON = 'gateway /api/** as shipped, APP_SESSION_IDLE_TIMEOUT=30'

/** @param {import('../setup.mjs').Bench} bench */
export async function run(bench) {
  const off = await bench.startGateway(OFF, await bench.shippedEnv(), 'idle-off-gateway')
  const on = await bench.startGateway(ON, { ...(await bench.shippedEnv()), APP_SESSION_IDLE_TIMEOUT: '30' }, 'idle-on-gateway')
  const cookie = await bench.loginCookie(on.port)
  /** @type {[import('../load.mjs').Target, import('../load.mjs').Target]} */
  const targets = [[OFF, `${off.url}/api/ping`, { cookie }], [ON, `${on.url}/api/ping`, { cookie }]]
  const { runs: [offRuns, onRuns], figure, ratio } = await comparePaths(targets, log)
  return {
    paths: [pathRow(OFF, offRuns), pathRow(ON, onRuns)],
    checks: [{ what: '/api/** with APP_SESSION_IDLE_TIMEOUT on vs off, as shipped', figure, target: '≥ 0.97×', ok: ratio >= 0.97 }],
  }
}
