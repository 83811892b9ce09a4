// @ts-check
/**
 * Throughput of /api/**: a tiny GET carrying the browser's ~3.5 KB session cookie, wrk -c32, through the gateway bare,
 * with access log + metrics, and as shipped (access log, metrics listener, Redis with 10,000 revocations), against
 * nginx, @fastify/http-proxy, h3 `proxyRequest` and the floor of the gateway's base (bench/floor-proxy.mjs). Standalone
 * interleaved rounds of every path, then each ratio a check names head to head (the verdicts stand on those: on this
 * 2-core machine one path's standalone rounds move by up to 7× within a run, the head-to-head rounds by a few %), then
 * the headline duel again on two new processes loaded together from their start.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { headToHead, interleavedRounds, load, median, spread } from '../load.mjs'
import { freePort, stop } from '../processes.mjs'
import { log, tmp } from '../setup.mjs'
import { pathRow } from '../table.mjs'

const NGINX = 'nginx proxy_pass (keepalive)'
const FASTIFY = '@fastify/http-proxy'
const FLOOR = 'floor: node:http + undici dispatch, nothing else'
const H3 = 'h3 proxyRequest (plain h3 app, undici fetch)'
const BARE = 'gateway /api/** bare (access log, metrics, revocation off)'
const OBSERVED = 'gateway /api/** (access log + metrics on)'
const SHIPPED = 'gateway /api/** as shipped (access log + metrics + Redis revocation, 10,000 held)'

/** nginx proxy_pass, one worker on CPU 0: the same request as every other proxy (the cookie passes), keep-alive. */
async function startNginxProxy(bench, backend) {
  const port = await freePort()
  writeFileSync(`${tmp}nginx.conf`, `worker_processes 1; pid ${tmp}nginx.pid; daemon off; error_log ${tmp}nginx-error.log; events { worker_connections 1024; }
http { access_log off; client_body_temp_path ${tmp}; proxy_temp_path ${tmp}; keepalive_requests 1000000;
  upstream backend { server ${new URL(backend).host}; keepalive 64; keepalive_requests 1000000; }
  server { listen 127.0.0.1:${port};
    location /api/ { proxy_pass http://backend/; proxy_http_version 1.1; proxy_set_header Connection ""; } } }`)
  return bench.start(NGINX, 'nginx', ['-c', `${tmp}nginx.conf`, '-p', tmp], port)
}

/**
 * The headline duel on two new processes, loaded together from their start and never left idle. A Node process that
 * sits idle between rounds gets full collections from V8's memory reducer, and after them some of Node's own hot paths
 * can run much slower (process.nextTick through the V8 runtime: bench/RESULTS.md, 2026-11-22 15:40 UTC); which of the
 * two processes above went through that is chance. Shown beside the verdict, which stays on the first duel.
 */
async function freshDuel(bench, backend, cookie) {
  const shipped = await bench.attempt(`${SHIPPED}, new process`, async () => bench.startGateway(`${SHIPPED}, new process`, await bench.shippedEnv(), 'fresh-shipped-gateway'))
  const fastify = await bench.attempt(`${FASTIFY}, new process`, () => bench.startScript(`${FASTIFY}, new process`, 'fastify-proxy.mjs', [backend]))
  let duel
  if (shipped && fastify) {
    /** @type {import('../load.mjs').Target[]} */
    const pair = [[FASTIFY, `${fastify.url}/api/ping`, { cookie }], [SHIPPED, `${shipped.url}/api/ping`, { cookie }]]
    // Warm-up together (a fresh process needs ~15 s of load), then the rounds right after.
    for (let i = 0; i < 4; i++) await Promise.all(pair.map(([, url, headers]) => load(url, headers)))
    duel = await headToHead(pair[0], pair[1])
  }
  await Promise.all([shipped, fastify].map(server => server && stop(server.child)))
  log('fresh-pair duel done')
  return duel
}

/** @param {import('../setup.mjs').Bench} bench */
export async function run(bench) {
  const backend = await bench.tinyBackend()
  const bare = await bench.bareGateway()
  const observedEnv = await bench.observedEnv()
  const observed = await bench.startGateway(OBSERVED, observedEnv, 'observed-gateway')
  const shipped = bench.tools.redis
    ? await bench.attempt(SHIPPED, async () => bench.startGateway(SHIPPED, await bench.shippedEnv(), 'shipped-gateway'))
    : void bench.failed.set(SHIPPED, 'redis-server is not installed')
  const fastify = await bench.attempt(FASTIFY, () => bench.startScript(FASTIFY, 'fastify-proxy.mjs', [backend]))
  const floor = await bench.attempt(FLOOR, () => bench.startScript(FLOOR, 'floor-proxy.mjs', [backend]))
  const h3 = await bench.attempt(H3, () => bench.startScript(H3, 'h3-proxy.mjs', [backend]))
  const nginx = bench.tools.nginx
    ? await bench.attempt(NGINX, () => startNginxProxy(bench, backend))
    : void bench.failed.set(NGINX, 'nginx is not installed and could not be installed')

  const cookie = await bench.cookie()
  /** @type {[string, string | undefined, ('nginx' | 'fastify' | 'h3')?][]} */
  const paths = [[NGINX, nginx?.url, 'nginx'], [FASTIFY, fastify?.url, 'fastify'], [FLOOR, floor?.url], [H3, h3?.url, 'h3'], [BARE, bare.url], [OBSERVED, observed.url], [SHIPPED, shipped?.url]]
  /** @type {import('../load.mjs').Target[]} */
  const targets = paths.flatMap(([name, url]) => (url ? [[name, `${url}/api/ping`, { cookie }]] : []))
  log(`load: wrk -c32, ${targets.length} paths, interleaved rounds`)
  const runs = await interleavedRounds(targets, log)
  const target = name => targets.find(([named]) => named === name)
  /** @type {Record<string, Awaited<ReturnType<typeof headToHead>>>} */
  const duels = {}
  for (const [key, a, b] of [['observed', BARE, OBSERVED], ['shipped', FASTIFY, SHIPPED], ['bare', FASTIFY, BARE], ['floor', FASTIFY, FLOOR], ['revocation', OBSERVED, SHIPPED], ['h3', H3, BARE]]) {
    const [targetA, targetB] = [target(a), target(b)]
    if (targetA && targetB) duels[key] = await headToHead(targetA, targetB)
  }
  log('head-to-head rounds done')
  const fresh = runs.has(SHIPPED) && runs.has(FASTIFY) ? await freshDuel(bench, backend, cookie) : undefined

  // Proof that the observed gateway did the work: its access lines and its request counter.
  const accessLines = readFileSync(bench.logOf('observed-gateway'), 'utf8').split('\n').filter(line => line.includes('"type":"access"')).length
  const scraped = await (await fetch(`http://127.0.0.1:${observedEnv.APP_METRICS_PORT}/metrics`)).text()
  const counted = [...scraped.matchAll(/^svc_gateway_requests_total\{[^}]*\} (\d+)/gm)].reduce((sum, match) => sum + Number(match[1]), 0)

  /** @type {import('../table.mjs').PathRow[]} */
  const rows = paths.map(([name, , anchor]) => {
    const list = runs.get(name)
    return list ? pathRow(name, list, anchor) : { name, anchor, failed: bench.failed.get(name) ?? 'not run' }
  })
  const rowOf = name => rows.find(row => row.name === name && !row.failed)
  if ((rowOf(NGINX)?.rps ?? Infinity) < (rowOf(BARE)?.rps ?? 0)) log('nginx measured below the gateway: check the set-up (worker count, keep-alive, CPU pinning) before writing it down')

  const roundRatios = (a, b) => (runs.has(a) && runs.has(b) ? runs.get(a)?.map((run, i) => run.rps / (runs.get(b)?.[i].rps ?? NaN)) : undefined)
  const missing = (...names) => `not measured: ${names.filter(name => bench.failed.has(name) || !rowOf(name)).map(name => `${name} failed`).join(', ')}`
  const duelText = (duel, standalone, a, b) => `head to head ${spread(duel.ratios)}, p99 ${duel.p99.b.toFixed(2)} vs ${duel.p99.a.toFixed(2)} ms; standalone rounds ${spread(standalone)}, p99 ${rowOf(b)?.p99?.toFixed(2)} vs ${rowOf(a)?.p99?.toFixed(2)} ms`
  const holds = (duel, least, p99 = false) => (duel ? median(duel.ratios) >= least && (!p99 || duel.p99.b <= duel.p99.a) : undefined)
  const shippedVsFastify = roundRatios(SHIPPED, FASTIFY)
  const bareVsFastify = roundRatios(BARE, FASTIFY)
  const observedVsBare = roundRatios(OBSERVED, BARE)
  const shippedVsObserved = roundRatios(SHIPPED, OBSERVED)
  const bareVsH3 = roundRatios(BARE, H3)
  const revokedNs = bench.results.seal?.revokedNs
  return {
    paths: rows,
    checks: [
      { what: 'proxy as shipped vs @fastify/http-proxy (req/s; p99)', figure: duels.shipped && shippedVsFastify ? duelText(duels.shipped, shippedVsFastify, FASTIFY, SHIPPED) : missing(SHIPPED, FASTIFY), target: '≥ 1.5×, p99 no worse', ok: holds(duels.shipped, 1.5, true) },
      {
        what: 'the same, two new processes loaded together from their start (never idle)',
        figure: fresh ? `head to head ${spread(fresh.ratios)}, p99 ${fresh.p99.b.toFixed(2)} vs ${fresh.p99.a.toFixed(2)} ms` : `not measured: ${bench.failed.get(`${SHIPPED}, new process`) ?? bench.failed.get(`${FASTIFY}, new process`) ?? 'the duel above was not run'}`,
        target: 'shown (the verdict is the row above)', ok: fresh ? true : undefined,
      },
      // The floor: what node:http and undici alone serve, the most any proxy on this base (the gateway's, and
      // fastify's) can reach; the gateway's share of it names what its own work costs.
      {
        what: 'floor (node:http + undici dispatch, nothing else) vs @fastify/http-proxy; gateway as shipped against the floor',
        figure: duels.floor ? `head to head ${spread(duels.floor.ratios)}; the gateway as shipped serves ${duels.shipped ? (median(duels.shipped.ratios) / median(duels.floor.ratios)).toFixed(2) : '—'} of the floor` : missing(FLOOR, FASTIFY),
        target: 'shown (the ceiling of the 1.5× target)', ok: duels.floor ? true : undefined,
      },
      { what: 'proxy bare vs @fastify/http-proxy (req/s; p99)', figure: duels.bare && bareVsFastify ? duelText(duels.bare, bareVsFastify, FASTIFY, BARE) : missing(FASTIFY), target: '≥ 1.0×, p99 no worse', ok: holds(duels.bare, 1, true) },
      { what: 'proxy with access log + metrics on vs off', figure: duels.observed && observedVsBare ? `head to head ${spread(duels.observed.ratios)}; standalone rounds ${spread(observedVsBare)}; ${accessLines} access lines written, ${counted} requests counted` : missing(OBSERVED), target: '≥ 0.90×', ok: holds(duels.observed, 0.9) },
      {
        what: 'proxy holding 10,000 revocations (Redis) vs none',
        figure: duels.revocation && shippedVsObserved ? `head to head ${spread(duels.revocation.ratios)}; standalone rounds ${spread(shippedVsObserved)}; the check itself ${revokedNs === undefined ? 'not measured (the seal scenario times it)' : `${revokedNs.toFixed(0)} ns a request`}` : missing(SHIPPED),
        target: '≥ 0.95×', ok: holds(duels.revocation, 0.95),
      },
      { what: 'proxy bare vs h3 proxyRequest', figure: duels.h3 && bareVsH3 ? `head to head ${spread(duels.h3.ratios)}; standalone rounds ${spread(bareVsH3)}` : missing(H3), target: '≥ 4×', ok: holds(duels.h3, 4) },
    ],
  }
}
