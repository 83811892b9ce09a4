// @ts-check
/**
 * /api/** with OpenTelemetry tracing (issue 43: "on at 100% sampling: the cost measured and stated; on at 10%: within
 * 5% of off"): three gateways as shipped (access log, metrics listener, Redis revocations), one without any OTEL_*
 * variable, one exporting every request's spans (a server span and the backend call's client span) to a loopback
 * OTLP/HTTP sink (bench/otlp-sink.mjs, on CPU 1 with the load), one sampling 10% of requests
 * (OTEL_TRACES_SAMPLER=parentbased_traceidratio, _ARG=0.1). The same ~3.5 KB session cookie; standalone interleaved
 * rounds, then each traced gateway head to head with the untraced one: the ratio of their rates, and the ratio of
 * the CPU time each spent a request (/proc), which a busy machine's scheduler does not tilt. Tracing off against a
 * build without it is `npm run bench:ab` (bench/RESULTS.md).
 */
import { headToHead, interleavedRounds, median, spread } from '../load.mjs'
import { log } from '../setup.mjs'
import { pathRow } from '../table.mjs'

const OFF = 'gateway /api/** as shipped, tracing off'
const ALL = 'gateway /api/** as shipped, tracing on, 100% sampled'
const TENTH = 'gateway /api/** as shipped, tracing on, 10% sampled'

/** @param {import('../setup.mjs').Bench} bench */
export async function run(bench) {
  const sink = await bench.startScript('OTLP sink', 'otlp-sink.mjs', [], 1)
  const traced = { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_SERVICE_NAME: 'bench-gateway' }
  const off = await bench.startGateway(OFF, await bench.shippedEnv(), 'tracing-off-gateway')
  const all = await bench.startGateway(ALL, { ...(await bench.shippedEnv()), ...traced }, 'tracing-all-gateway')
  const tenth = await bench.startGateway(TENTH, { ...(await bench.shippedEnv()), ...traced, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }, 'tracing-tenth-gateway')
  const cookie = await bench.loginCookie(off.port)
  /** @type {import('../load.mjs').Target[]} */
  const targets = [[OFF, `${off.url}/api/ping`, { cookie }], [ALL, `${all.url}/api/ping`, { cookie }], [TENTH, `${tenth.url}/api/ping`, { cookie }]]
  const runs = await interleavedRounds(targets, log)
  const [offRuns, allRuns, tenthRuns] = targets.map(([name]) => runs.get(name) ?? [])
  const pid = (/** @type {import('../setup.mjs').Server} */ server) => server.child.pid ?? 0
  const allDuel = await headToHead(targets[0], targets[1], undefined, { a: pid(off), b: pid(all) })
  const tenthDuel = await headToHead(targets[0], targets[2], undefined, { a: pid(off), b: pid(tenth) })
  const standalone = (/** @type {import('../load.mjs').LoadRun[]} */ traced) => spread(traced.map((run, i) => run.rps / offRuns[i].rps))
  // Off's CPU a request over the traced one's: a rate as the CPU alone would allow it, read as the other ratios are.
  const byCpu = (/** @type {number[]} */ cpuRatios) => spread(cpuRatios.map(ratio => 1 / ratio))
  return {
    paths: [pathRow(OFF, offRuns), pathRow(ALL, allRuns), pathRow(TENTH, tenthRuns)],
    checks: [
      { what: '/api/** with tracing on, 100% sampled, vs off (the cost, stated)', figure: `head to head ${spread(allDuel.ratios)}; by CPU a request ${byCpu(allDuel.cpuRatios)}; standalone rounds ${standalone(allRuns)}`, target: 'stated', ok: true },
      { what: '/api/** with tracing on, 10% sampled, vs off', figure: `head to head ${spread(tenthDuel.ratios)}; by CPU a request ${byCpu(tenthDuel.cpuRatios)}; standalone rounds ${standalone(tenthRuns)}`, target: '≥ 0.95×', ok: median(tenthDuel.ratios) >= 0.95 },
    ],
  }
}
