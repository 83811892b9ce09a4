// @ts-check
/**
 * Routes of APP_API_ROUTES_FILE (issue 40): a request through a named route (token `user`: the session is read and
 * checked) against the default /api/** route of the same gateway (APP_API_PROXY_TARGET, the contract's rules), both to
 * the constant backend with the ~3.5 KB session cookie; then the named route of a gateway whose file holds 100 routes
 * against the same route of a gateway whose file holds 2. Standalone interleaved rounds, then head to head.
 */
import { writeFileSync } from 'node:fs'
import { comparePaths } from '../load.mjs'
import { log, tmp } from '../setup.mjs'
import { pathRow } from '../table.mjs'

const DEFAULT = 'gateway /api/** default route (routes file of 2)'
const NAMED = 'gateway /api/named/** named route, token user (routes file of 2)'
const MANY = 'gateway /api/named/** named route, token user (routes file of 100)'

/** A routes file: the named route `/api/named` to the backend, and `others` more routes to it under other prefixes. */
function routesFile(name, backend, others) {
  const routes = [{ name: 'named', prefix: '/api/named', target: backend }]
  for (let index = 0; index < others; index++) routes.push({ name: `r${index}`, prefix: `/api/r${index}/v${index % 4}`, target: `${backend}/r${index}` })
  const file = `${tmp}${name}`
  writeFileSync(file, JSON.stringify({ routes }))
  return file
}

/** @param {import('../setup.mjs').Bench} bench */
export async function run(bench) {
  const backend = await bench.tinyBackend()
  const few = await bench.startGateway(NAMED, { APP_API_ROUTES_FILE: routesFile('routes-2.json', backend, 1) }, 'routes-2-gateway')
  const cookie = await bench.loginCookie(few.port)
  /** @type {[import('../load.mjs').Target, import('../load.mjs').Target]} */
  const sameGateway = [[DEFAULT, `${few.url}/api/ping`, { cookie }], [NAMED, `${few.url}/api/named/ping`, { cookie }]]
  const named = await comparePaths(sameGateway, log)
  log('named route vs default done')
  const many = await bench.startGateway(MANY, { APP_API_ROUTES_FILE: routesFile('routes-100.json', backend, 99) }, 'routes-100-gateway')
  /** @type {[import('../load.mjs').Target, import('../load.mjs').Target]} */
  const fileSize = [[NAMED, `${few.url}/api/named/ping`, { cookie }], [MANY, `${many.url}/api/named/ping`, { cookie }]]
  const hundred = await comparePaths(fileSize, log)
  return {
    paths: [pathRow(DEFAULT, named.runs[0]), pathRow(NAMED, named.runs[1]), pathRow(MANY, hundred.runs[1])],
    checks: [
      { what: 'named route (token user) vs default /api/** route, same gateway', figure: named.figure, target: '≥ 0.97×', ok: named.ratio >= 0.97 },
      { what: 'named route, routes file of 100 vs of 2', figure: hundred.figure, target: '≥ 0.97×', ok: hundred.ratio >= 0.97 },
    ],
  }
}
