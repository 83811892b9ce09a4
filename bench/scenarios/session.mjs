// @ts-check
/**
 * GET /auth/session on a gateway with the mock IAM against a constant Nuxt route of the bare gateway (/api/health, no
 * proxy): what reading the session costs over Nitro's own answer. Standalone interleaved rounds, then head to head.
 */
import { comparePaths } from '../load.mjs'
import { log } from '../setup.mjs'
import { pathRow } from '../table.mjs'

const NUXT_ROUTE = 'Nuxt route, constant (no proxy)'
const SESSION = 'gateway GET /auth/session (mock)'

/** @param {import('../setup.mjs').Bench} bench */
export async function run(bench) {
  const bare = await bench.bareGateway()
  const mock = await bench.startGateway(SESSION, { APP_AUTH_MOCK: 'true' }, 'mock-gateway')
  const mockCookie = await bench.loginCookie(mock.port, 'bench', 'x')
  /** @type {[import('../load.mjs').Target, import('../load.mjs').Target]} */
  const targets = [[NUXT_ROUTE, `${bare.url}/api/health`, {}], [SESSION, `${mock.url}/auth/session`, { cookie: mockCookie }]]
  const { runs: [route, session], figure, ratio } = await comparePaths(targets, log)
  return {
    paths: [pathRow(NUXT_ROUTE, route), pathRow(SESSION, session)],
    checks: [{ what: 'GET /auth/session (mock) vs constant Nuxt route', figure, target: '≥ 0.8×', ok: ratio >= 0.8 }],
  }
}
