// @ts-check
/**
 * GET /auth/verify, the forward-auth check (issue 28: "at least the proxy's rate"): the bare gateway answering the
 * check for its ~3.5 KB session cookie against the same gateway proxying /api/** with that cookie (to the constant
 * backend), standalone interleaved rounds, then head to head. Both are answered at the gate; the check has no backend
 * to wait for, so it should serve more.
 */
import { comparePaths } from '../load.mjs'
import { log } from '../setup.mjs'
import { pathRow } from '../table.mjs'

const PROXY = 'gateway /api/** bare (the proxy, for the check)'
const VERIFY = 'gateway GET /auth/verify?permission=… (forward auth)'

/** @param {import('../setup.mjs').Bench} bench */
export async function run(bench) {
  const bare = await bench.bareGateway()
  const cookie = await bench.cookie()
  /** @type {[import('../load.mjs').Target, import('../load.mjs').Target]} */
  const targets = [[PROXY, `${bare.url}/api/ping`, { cookie }], [VERIFY, `${bare.url}/auth/verify?permission=/orders/search`, { cookie }]]
  const { runs: [proxy, verify], figure, ratio } = await comparePaths(targets, log)
  return {
    paths: [pathRow(PROXY, proxy), pathRow(VERIFY, verify)],
    checks: [{ what: 'GET /auth/verify vs /api/** proxy, same gateway', figure, target: '≥ 1×', ok: ratio >= 1 }],
  }
}
