// @ts-check
/**
 * `npm run bench`: every figure the performance issues name, each printed with its target and whether it holds.
 * `npm run bench -- throughput session` (or `node bench/run.mjs throughput session`) runs those scenarios alone.
 * The scenarios, one file each in bench/scenarios/ (in the order they run):
 * - seal: seal/unseal and the revocation check, timed in a child process first, on a quiet machine;
 * - throughput: /api/** through the gateway bare, with access log + metrics and as shipped, against nginx,
 *   @fastify/http-proxy, h3 `proxyRequest` and the floor of the gateway's base, standalone and head to head;
 * - session: GET /auth/session (mock) against a constant Nuxt route;
 * - routes: a named route of APP_API_ROUTES_FILE against the default /api/** route; a file of 100 routes against 2;
 * - verify: GET /auth/verify (forward auth) against the /api/** proxy of the same gateway;
 * - idle: /api/** as shipped with APP_SESSION_IDLE_TIMEOUT on against off;
 * - tracing: /api/** as shipped with OpenTelemetry tracing on (100% and 10% sampled, to a loopback OTLP sink) against off;
 * - oidc: /api/** with an OpenID session (APP_AUTH_KIND=oidc, the development provider) against a contract-IAM one;
 * - websockets: echoes through the gateway against direct;
 * - scaling: one gateway process against two;
 * - streaming: 1 GiB up and down through one gateway, peak memory growth;
 * - memory: 200 streams of 32 MiB at once, the gateway against a bare node:http pipe proxy;
 * - login: the gateway's cost over the two IAM calls;
 * - runtimes: the gateway as shipped against fastify on each Node given (BENCH_NODES; the matrix's Node 24 by default).
 * bench/setup.mjs starts the servers they share, bench/load.mjs loads them, bench/table.mjs prints the table. A peer
 * that fails to start is reported as failed, never left out. Prints the table and writes bench/.tmp/last-table.md
 * (a run of some scenarios: bench/.tmp/last-table-NAME-NAME.md). BENCH_SKIP_BUILD=1 reuses the playground's build;
 * BENCH_SECONDS (5) and BENCH_ROUNDS (3) set the length.
 */
import { writeFileSync } from 'node:fs'
import { ROUNDS, SECONDS } from './load.mjs'
import * as idle from './scenarios/idle.mjs'
import * as login from './scenarios/login.mjs'
import * as memory from './scenarios/memory.mjs'
import * as oidc from './scenarios/oidc.mjs'
import * as routes from './scenarios/routes.mjs'
import * as runtimes from './scenarios/runtimes.mjs'
import * as scaling from './scenarios/scaling.mjs'
import * as seal from './scenarios/seal.mjs'
import * as session from './scenarios/session.mjs'
import * as streaming from './scenarios/streaming.mjs'
import * as throughput from './scenarios/throughput.mjs'
import * as tracing from './scenarios/tracing.mjs'
import * as verify from './scenarios/verify.mjs'
import * as websockets from './scenarios/websockets.mjs'
import { Bench, log, tmp } from './setup.mjs'
import { tableLines, versions } from './table.mjs'

/**
 * The scenarios, in the order they run.
 * @type {Record<string, { run: (bench: Bench) => Promise<import('./table.mjs').ScenarioResult> }>}
 */
const SCENARIOS = { seal, throughput, routes, session, verify, idle, tracing, oidc, websockets, scaling, streaming, memory, login, runtimes }
/** The order of the table's rows. */
const TABLE_ORDER = ['throughput', 'routes', 'websockets', 'session', 'verify', 'idle', 'tracing', 'oidc', 'streaming', 'memory', 'scaling', 'login', 'seal']

const asked = process.argv.slice(2)
const unknown = asked.filter(name => !(name in SCENARIOS))
if (unknown.length) {
  console.error(`[bench] no scenario ${unknown.map(name => `'${name}'`).join(', ')}: choose from ${Object.keys(SCENARIOS).join(', ')} (none: all of them)`)
  process.exit(2)
}
const selected = Object.keys(SCENARIOS).filter(name => !asked.length || asked.includes(name))

const bench = new Bench()
try {
  const head = versions()
  for (const line of head) log(line)
  /** @type {Record<string, import('./table.mjs').ScenarioResult>} */
  const results = {}
  for (const name of selected) {
    log(`${name}…`)
    results[name] = await SCENARIOS[name].run(bench)
    log(`${name} done`)
  }
  // A scenario missing from TABLE_ORDER still shows, last: a figure is never dropped silently.
  const shown = [...TABLE_ORDER, ...selected.filter(name => !TABLE_ORDER.includes(name))].filter(name => results[name]).map(name => results[name])
  const lines = tableLines({
    head,
    load: `Load: ${bench.tools.wrk ? 'wrk' : 'autocannon'} -c32, ${SECONDS} s a run, ${ROUNDS} interleaved rounds; backend of the throughput rows: ${bench.tools.nginx ? 'nginx answering a constant' : 'the Node backend (no nginx)'}. ${asked.length ? `Scenarios: ${selected.join(', ')} (not the whole bench). ` : ''}${new Date().toISOString()}`,
    paths: shown.flatMap(result => result.paths ?? []),
    checks: shown.flatMap(result => result.checks),
    failed: bench.failed,
  })
  console.log(`\n${lines.join('\n')}\n`)
  writeFileSync(`${tmp}${asked.length ? `last-table-${selected.join('-')}` : 'last-table'}.md`, `${lines.join('\n')}\n`)
}
catch (error) {
  // Said, never swallowed: a bench that fails must not look like one that passed.
  console.error('[bench] failed:', error)
  process.exitCode = 1
}
finally {
  await bench.close()
  process.exit(process.exitCode ?? 0)
}
