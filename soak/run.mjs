// @ts-check
/**
 * `npm run soak [-- --minutes N] [--out DIR] [--no-build] [--redis standalone|sentinel]`: two gateway instances of the
 * built playground sharing one redis-server (or, with `--redis sentinel`, a primary, a replica and three sentinels,
 * whose primary is killed where the redis-server would crash), the development IAM and the soak backend, under a steady mix (soak/load.mjs) for N minutes (10),
 * with faults on a schedule scaled to the run (soak/schedule.mjs). Then every logout is checked on both instances, the
 * processes are stopped, their logs read, and each check (soak/checks.mjs) gives PASS or FAIL in DIR/summary.md
 * (soak-report/), beside DIR/soak.svg. Exits 1 when any check fails. docs/soak.md says what each check measures.
 * NODE_OPTIONS, when set, reaches the gateways (as an operator's agent would).
 */
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { freePort } from '../bench/processes.mjs'
import { startDevIam } from '../dev/iam.mjs'
import { startSoakBackend } from './backend.mjs'
import { checkAccessLines, checkDrains, checkErrors, checkFlatness, checkLogs, checkPool, checkRevocations, checkStreams } from './checks.mjs'
import { checkLatencyRecovery, checkMemorySlope } from './trend-checks.mjs'
import { runFaults } from './faults.mjs'
import { SOAK_ACCOUNTS, startLoad } from './load.mjs'
import { gatewayInstance, startRedis } from './processes.mjs'
import { startSentinelRedis } from './redis-sentinel.mjs'
import { writeReport } from './report.mjs'
import { startSampler } from './sampler.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const entry = join(root, 'playground/.output/server/index.mjs')
const { values } = parseArgs({ options: { 'minutes': { type: 'string', default: '10' }, 'out': { type: 'string', default: 'soak-report' }, 'no-build': { type: 'boolean', default: false }, 'redis': { type: 'string', default: 'standalone' } } })
const topology = /** @type {import('./schedule.mjs').RedisTopology} */ (values.redis)
if (topology !== 'standalone' && topology !== 'sentinel') throw new Error(`--redis must be standalone or sentinel, not '${values.redis}'`)
const minutes = Number(values.minutes)
if (!(minutes >= 1)) throw new Error(`--minutes must be a number of 1 or more, not '${values.minutes}'`)
const runMs = Math.round(minutes * 60_000)
const out = resolve(values.out ?? 'soak-report')
const logDir = join(out, 'logs')
const sleep = (/** @type {number} */ ms) => new Promise(resolve => setTimeout(resolve, ms))
const began = Date.now()
const log = (/** @type {string} */ line) => console.log(`[soak ${((Date.now() - began) / 1000).toFixed(0).padStart(4)} s] ${line}`)
/** The proxy's pool limit: APP_API_PROXY_CONNECTIONS's default, read from the source the build was made from. */
const poolLimit = Number(/apiProxyConnections: (\d+)/.exec(readFileSync(join(root, 'server/core/config/defaults.ts'), 'utf8'))?.[1])
if (!poolLimit) throw new Error('server/core/config/defaults.ts: no `apiProxyConnections` default found')
/** The session cache's bound (server/core/session/session-cache.ts), filled in the warm-up. */
const cacheSize = Number(/maxEntries = (\d+)/.exec(readFileSync(join(root, 'server/core/session/session-cache.ts'), 'utf8'))?.[1])
if (!cacheSize) throw new Error('server/core/session/session-cache.ts: no `maxEntries` bound found')

if (!values['no-build']) {
  log('building the playground (nuxt build playground)')
  const build = spawnSync('npx', ['nuxt', 'build', 'playground'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] })
  if (build.status !== 0) process.exit(build.status ?? 1)
}
rmSync(out, { recursive: true, force: true })
mkdirSync(logDir, { recursive: true })

/** Everything started, stopped in reverse order at the end or on a failure. */
const stoppers = /** @type {(() => Promise<unknown>)[]} */ ([])
async function stopAll() {
  for (const stop of stoppers.splice(0).reverse()) await stop().catch(() => {})
}
process.once('SIGINT', () => void stopAll().then(() => process.exit(130)))

try {
  const [redisPort, ...ports] = await Promise.all(Array.from({ length: 5 }, () => freePort()))
  const redis = topology === 'sentinel'
    ? await startSentinelRedis({ dir: join(out, 'redis-data'), ports: [redisPort, ...await Promise.all(Array.from({ length: 4 }, () => freePort()))] })
    : await startRedis({ port: redisPort, dir: join(out, 'redis-data') })
  stoppers.push(redis.stop)
  const redisEnv = 'env' in redis ? redis.env : { APP_REDIS_URL: redis.url }
  const iam = await startDevIam({ slowMs: 3000, accounts: SOAK_ACCOUNTS })
  stoppers.push(iam.close)
  const backend = await startSoakBackend()
  stoppers.push(backend.close)
  const env = {
    APP_SESSION_SECRET: randomBytes(32).toString('hex'),
    APP_AUTH_BASE_URL: iam.url,
    APP_API_PROXY_TARGET: backend.url,
    ...redisEnv,
    APP_AUTH_TIMEOUT: '2',
    APP_API_PROXY_TIMEOUT: '10000',
    APP_SHUTDOWN_TIMEOUT: '20',
  }
  const gateways = ['a', 'b'].map((name, i) => gatewayInstance({
    name, entry, port: ports[i], metricsPort: ports[i + 2], logDir,
    env: { ...env, APP_REVOCATION_JOURNAL: join(out, `journal-${name}.json`) },
  }))
  for (const gateway of gateways) stoppers.push(gateway.stop)
  await Promise.all(gateways.map(gateway => gateway.start()))
  log(`gateways ${gateways.map(g => g.url).join(', ')}; redis ${'env' in redis ? redis.describe : redis.url}; IAM ${iam.url}; backend ${backend.url}; ${minutes} min`)

  const origin = Date.now()
  const mode = { abortUploads: false, slowReaders: false }
  const load = startLoad({ instances: gateways, origin, mode })
  const sampler = startSampler({ instances: gateways, backend, origin, everyMs: runMs >= 300_000 ? 2000 : 1000 })
  const primed = { sessions: Math.ceil(cacheSize * 1.1), from: 0, to: 0 }
  const afterRestart = async () => {
    primed.from = Date.now() - origin
    await load.prime(primed.sessions)
    primed.to = Date.now() - origin
    log(`warm-up: ${primed.sessions} sessions opened on every instance (their session caches full)`)
  }
  const neighbours = { iam, backend, redis, load: { mode, rotation: load.rotation }, gateways: new Map(gateways.map(g => [g.name, g])) }
  const faults = runFaults({ runSeconds: runMs / 1000, origin, neighbours, log, afterRestart, redis: topology })
  await sleep(origin + runMs - Date.now())
  const windows = await faults
  log(`${runMs / 60_000} min of load done: stopping it, then checking ${load.logouts.length} logouts on every instance`)
  await load.stop()
  sampler.stop()
  await sleep(2000) // every instance learns of a logout within about a second
  const revocations = await load.verifyLogouts()
  load.close()
  await sleep(7000) // past the backend's keep-alive time: a pooled connection left now is stuck
  const quiet = await sampler.sampleNow()
  log('stopping the gateways (SIGTERM)')
  await stopAll()

  const logs = gateways.flatMap(g => g.runs.map(run => ({ instance: g.name, pid: run.pid, exitCode: run.exitCode, stdout: readFileSync(run.stdout, 'utf8'), stderr: readFileSync(run.stderr, 'utf8') })))
  const accessLines = new Map(gateways.map(g => [g.name, new Map()]))
  for (const { instance, stdout } of logs) {
    for (const line of stdout.split('\n')) {
      if (!line.includes('"type":"access"')) continue
      const id = JSON.parse(line).requestId
      const ids = accessLines.get(instance)
      ids?.set(id, (ids.get(id) ?? 0) + 1)
    }
  }
  const verdicts = [
    checkErrors(load.outcomes, windows),
    checkLogs(logs),
    checkRevocations(revocations, load.logouts.length),
    checkAccessLines(load.outcomes, accessLines),
    checkStreams(load.outcomes),
    checkFlatness(sampler.samples.filter(s => s.t <= runMs), runMs, primed.to),
    checkMemorySlope(sampler.samples, load.outcomes, runMs, primed.to),
    checkLatencyRecovery(load.outcomes, windows),
    checkPool(sampler.samples, poolLimit, quiet),
    checkDrains(logs, windows.find(w => w.kind === 'restart')?.note),
  ]
  const setup = [
    `2 gateway instances of the built playground (${logs.length} processes: ${logs.map(l => `${l.instance} pid ${l.pid}`).join(', ')}; NODE_OPTIONS ${process.env.NODE_OPTIONS ? `'${process.env.NODE_OPTIONS}'` : 'not set'}), ${'env' in redis ? redis.describe : 'one redis-server (append-only file, fsync always)'}, the development IAM (APP_AUTH_TIMEOUT 2 s; its stall: 3 s), the soak backend (soak/backend.mjs)`,
    'load (soak/load.mjs): 8 users (log in, 4 session reads and 4 proxied GETs, log out), 2 streamers (uploads and downloads of 2 to 6 MiB), 3 tunnellers (a WebSocket echo for 10 s, then log out)',
    `warm-up: after the restart, ${primed.sessions} sessions logged in and each opened on every instance (${(primed.from / 1000).toFixed(1)}–${(primed.to / 1000).toFixed(1)} s), so that the session caches (${cacheSize} a process) are full before minute 2`,
    `samples every ${runMs >= 300_000 ? 2 : 1} s; backend pool limit ${poolLimit} (APP_API_PROXY_CONNECTIONS)`,
  ]
  writeFileSync(join(out, 'faults.json'), JSON.stringify(windows, null, 2))
  writeFileSync(join(out, 'samples.json'), JSON.stringify(sampler.samples))
  writeFileSync(join(out, 'outcomes.jsonl'), load.outcomes.map(o => JSON.stringify(o)).join('\n'))
  const lines = writeReport(out, { verdicts, outcomes: load.outcomes, samples: sampler.samples, windows, runMs, warmUp: primed, setup })
  console.log(lines.filter(line => /^(PASS|FAIL) /.test(line)).join('\n'))
  log(`report: ${join(out, 'summary.md')}, ${join(out, 'soak.svg')}`)
  process.exit(verdicts.every(v => v.pass) ? 0 : 1)
}
catch (error) {
  console.error(`[soak] ${error instanceof Error ? error.stack : String(error)}`)
  await stopAll()
  process.exit(1)
}
