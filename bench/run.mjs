// @ts-check
/**
 * `npm run bench`: every figure the performance issues name, each printed with its target and whether it holds.
 * - Throughput of /api/** (tiny GET with the 3.5 KB session cookie, wrk -c32) through the gateway as shipped (access
 *   log, metrics listener, Redis revocation), the same gateway bare and with only access log + metrics, nginx,
 *   @fastify/http-proxy, h3 `proxyRequest` and the floor of the gateway's base (node:http + undici dispatch, nothing
 *   else: bench/floor-proxy.mjs): medians of interleaved rounds with their min–max, and head-to-head ratios (both
 *   paths loaded at once, their servers sharing one core: the machine's mood hits both alike).
 * - WebSocket echoes, GET /auth/session, login overhead, seal/unseal.
 * - Memory: 1 GiB up/down through one gateway; 100 uploads + 100 downloads of 32 MiB at once (a quarter of the readers
 *   slow) through the gateway and through a bare node:http pipe proxy, fresh processes, every byte checked.
 * - Scaling: one gateway process against two.
 * Servers run on CPU 0, the load generator, the backends and the log collectors on CPU 1 (taskset). Every gateway's
 * stdout goes through a pipe to a collector process (`cat` into bench/.tmp/*.log), as a container runtime reads it.
 * A peer that fails to start is reported as failed, never left out. Prints the table and writes bench/.tmp/last-table.md.
 * BENCH_SKIP_BUILD=1 reuses the builds; BENCH_SECONDS (5) and BENCH_ROUNDS (3) set the length.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { fileURLToPath } from 'node:url'
import { Agent, request } from 'undici'
import { startDevIam } from '../dev/iam.mjs'
import { patternSha256 } from '../dev/pattern.mjs'
import { download, freePort, has, memoryMiB, pin, startRevocationRedis, stop, streamMemory, upload, waitForHttp, waitForTcp, wrkMs } from './processes.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const tmp = fileURLToPath(new URL('./.tmp/', import.meta.url))
mkdirSync(tmp, { recursive: true })
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const SECRET = randomBytes(32).toString('hex')
const children = []
const log = (...args) => console.log('[bench]', ...args)

/** Installs a Debian package when missing and we are root; says which way it went. */
function ensurePackage(command, pkg) {
  if (has(command)) return true
  if (process.getuid?.() === 0 && has('apt-get')) {
    log(`${command} missing: installing the Debian package ${pkg}…`)
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
    spawnSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env })
    spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', pkg], { stdio: 'ignore', env })
  }
  const ok = has(command)
  log(ok ? `${command}: installed` : `${command}: not available, skipped`)
  return ok
}

/**
 * Starts a process pinned to `cpu` (0) and waits until its port answers. With `logFile`, its stdout is a pipe read by a
 * collector on CPU 1 (`cat` into the file), as a container runtime reads a container's stdout.
 */
async function startServer(name, command, args, port, env = {}, logFile = undefined, cpu = 0) {
  const [bin, argv] = pin(cpu, command, args)
  let stdout = 'ignore'
  if (logFile) {
    const [cbin, cargv] = pin(1, 'cat', [])
    const collector = spawn(cbin, cargv, { stdio: ['pipe', openSync(logFile, 'w'), 'ignore'] })
    children.push(collector)
    stdout = collector.stdin
  }
  const child = spawn(bin, argv, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', stdout, 'pipe'] })
  let errors = ''
  child.stderr.on('data', (chunk) => {
    errors += chunk
  })
  children.push(child)
  await waitForHttp(child, name, port, () => errors)
  return child
}

function build(target) {
  log(`building ${target}…`)
  const result = spawnSync('npx', ['nuxt', 'build', target], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] })
  if (result.status !== 0) throw new Error(`build of ${target} failed`)
}

/** One load run from CPU 1 (wrk, else autocannon); resolves with req/s, p50 and p99 in ms and the non-2xx count. */
function load(url, headers = {}, connections = 32) {
  const wrk = has('wrk')
  const args = wrk
    ? ['-t1', `-c${connections}`, `-d${SECONDS}s`, '--latency', ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]), url]
    : ['autocannon', '-c', String(connections), '-d', String(SECONDS), '-j', ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}=${v}`]), url]
  const [bin, argv] = pin(1, wrk ? 'wrk' : 'npx', args)
  return new Promise((resolve, reject) => {
    const child = spawn(bin, argv, { stdio: ['ignore', 'pipe', 'ignore'] })
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
    })
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`load on ${url} failed (exit ${code})`))
      if (!wrk) {
        const result = JSON.parse(out)
        return resolve({ rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx })
      }
      resolve({
        rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0),
        p50: wrkMs(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? '0ms'),
        p99: wrkMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? '0ms'),
        non2xx: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0),
      })
    })
  })
}

/**
 * Head to head: both paths loaded at once in each round (two load generators on CPU 1), their servers sharing CPU 0.
 * Whatever the machine does to one round it does to both, so the ratio of their rates is the ratio of their costs.
 * Returns b's rate over a's, round by round (the order of a and b alternates), and each one's median p99 (ms).
 */
async function headToHead([, urlA, headersA], [, urlB, headersB], rounds) {
  const ratios = []
  const p99s = { a: [], b: [] }
  for (let round = 0; round < rounds; round++) {
    const [a, b] = round % 2 === 0
      ? await Promise.all([load(urlA, headersA), load(urlB, headersB)])
      : (await Promise.all([load(urlB, headersB), load(urlA, headersA)])).reverse()
    ratios.push(b.rps / a.rps)
    p99s.a.push(a.p99)
    p99s.b.push(b.p99)
  }
  return { ratios, p99: { a: median(p99s.a), b: median(p99s.b) } }
}

/** One WebSocket echo run from CPU 1; returns echoed messages a second. */
function wsLoad(url) {
  const [bin, argv] = pin(1, process.execPath, [`${root}bench/ws-load.mjs`, url, '32', String(SECONDS), '32', '16'])
  return JSON.parse(execFileSync(bin, argv, { encoding: 'utf8' })).rate
}

const median = values => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/** The machine, Node and every peer's version, for the table's head. */
function versions() {
  const first = (command, args) => {
    const result = spawnSync(command, args, { encoding: 'utf8' })
    return `${result.stdout ?? ''}${result.stderr ?? ''}`.split('\n')[0].trim() || 'not installed'
  }
  const pkg = name => JSON.parse(readFileSync(`${root}node_modules/${name}/package.json`, 'utf8')).version
  const memory = Number(/MemTotal:\s+(\d+)/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0) / 1024 / 1024
  return [
    `Machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${memory.toFixed(0)} GiB, Linux ${first('uname', ['-r'])}`,
    `Node ${process.version}; nuxt ${pkg('nuxt')}, undici ${pkg('undici')}; fastify ${pkg('fastify')} + @fastify/http-proxy ${pkg('@fastify/http-proxy')}; h3 ${pkg('h3')}`,
    `${has('nginx') ? first('nginx', ['-v']) : 'nginx: not installed'}; ${has('wrk') ? first('wrk', ['-v']).replace(/ Copyright.*/, '') : `autocannon ${pkg('autocannon')}`}; ${has('redis-server') ? first('redis-server', ['--version']).replace(/ sha=.*/, '') : 'redis-server: not installed'}`,
  ]
}

async function loginCookie(port, username = 'admin', password = 'admin123') {
  const response = await fetch(`http://127.0.0.1:${port}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) })
  if (response.status !== 200) throw new Error(`login failed: ${response.status}`)
  return response.headers.getSetCookie().map(line => line.split(';')[0]).join('; ')
}

/**
 * Seal/unseal micro-benchmarks on the real modules (bundled with esbuild), in a child process of their own on CPU 1.
 * Run with BENCH_CRYPTO_CHILD=1 it measures; otherwise it starts that child and reads its answer.
 */
async function cryptoFigures() {
  if (process.env.BENCH_CRYPTO_CHILD !== '1') {
    const { build: esbuild } = await import('esbuild')
    await esbuild({
      stdin: { contents: 'export * from "./server/core/seal"; export * from "./server/core/session-cache"; export * from "./server/core/revocations"', resolveDir: root, loader: 'ts' },
      bundle: true, platform: 'node', format: 'esm', outfile: `${tmp}session-cache.mjs`, logLevel: 'silent',
    })
    const [bin, argv] = pin(1, process.execPath, [fileURLToPath(import.meta.url)])
    return JSON.parse(execFileSync(bin, argv, { encoding: 'utf8', env: { ...process.env, BENCH_CRYPTO_CHILD: '1' } }))
  }
  const { RevocationSet, SessionCache, deriveSealKeys, sealSession, unsealSession } = await import(`${tmp}session-cache.mjs`)
  const keys = deriveSealKeys([SECRET], false)
  const payload = { user: { id: 'u', name: 'Người dùng', email: 'u@x.vn', roles: ['admin'], permissions: ['/orders/search', '/orders/create'] }, accessToken: 't'.repeat(2400), expiresAt: Date.now() + 3_600_000, iat: Date.now(), sid: 'AAAAAAAAAAAAAAAA' }
  const sealed = sealSession(payload, keys)
  // A payload that does not open would time the refusal path: a figure that lies.
  if (!unsealSession(sealed, keys)) throw new Error('the bench payload does not open: fix it to match SessionPayload')
  const time = (fn, n) => {
    for (let i = 0; i < 2_000; i++) fn()
    const start = process.hrtime.bigint()
    for (let i = 0; i < n; i++) fn()
    return Number(process.hrtime.bigint() - start) / n / 1000
  }
  const cache = new SessionCache(keys)
  const revoked = new RevocationSet()
  for (let i = 0; i < 10_000; i++) revoked.add({ kind: 'session', sid: randomBytes(12).toString('base64url'), userId: `u-${i}`, iat: Date.now() })
  const opened = cache.open(sealed)
  return {
    revokedNs: time(() => revoked.isRevoked(opened), 1_000_000) * 1000,
    unsealUs: time(() => unsealSession(sealed, keys), 50_000),
    cachedUs: time(() => cache.open(sealed), 50_000),
    sealUs: time(() => sealSession(payload, keys), 50_000),
    cookieBytes: sealed.length,
  }
}

async function main() {
  const hasWrk = ensurePackage('wrk', 'wrk')
  const hasNginx = ensurePackage('nginx', 'nginx')
  const hasRedis = ensurePackage('redis-server', 'redis-server')
  if (process.env.BENCH_SKIP_BUILD !== '1' || !existsSync(`${root}playground/.output/server/index.mjs`)) build('playground')
  if (process.env.BENCH_SKIP_BUILD !== '1' || !existsSync(`${root}bench/h3-proxy-app/.output/server/index.mjs`)) build('bench/h3-proxy-app')
  const head = versions()
  for (const line of head) log(line)

  const crypto = await cryptoFigures() // first, on a quiet process

  /** @type {Record<string, number>} Every port from the OS (freePort). */
  const ports = {}
  for (const name of ['backend', 'gateway', 'fastify', 'h3', 'nginx', 'mock', 'stream', 'tiny', 'shipped', 'observed', 'metrics', 'streamMetrics', 'wsGateway', 'wsEcho', 'shippedMetrics', 'pipe', 'second', 'floor', 'freshShipped', 'freshShippedMetrics', 'freshFastify']) ports[name] = await freePort()
  let redisUrl = ''
  /** Peers and set-ups that did not start: reported in the table as failed, with the reason. */
  const failed = new Map()
  const attempt = async (name, start) => {
    try {
      return await start()
    }
    catch (error) {
      failed.set(name, error instanceof Error ? error.message : String(error))
      log(`${name}: FAILED (${failed.get(name)})`)
      return undefined
    }
  }
  const NGINX = 'nginx proxy_pass (keepalive)'
  const FASTIFY = '@fastify/http-proxy'
  const H3 = 'h3 proxyRequest in Nuxt'
  const NUXT_ROUTE = 'Nuxt route, constant (no proxy)'
  const BARE = 'gateway /api/** bare (access log, metrics, revocation off)'
  const OBSERVED = 'gateway /api/** (access log + metrics on)'
  const SHIPPED = 'gateway /api/** as shipped (access log + metrics + Redis revocation, 10,000 held)'
  const SESSION = 'gateway GET /auth/session (mock)'
  const FLOOR = 'floor: node:http + undici dispatch, nothing else'

  // Throughput runs proxy to the cheapest backend there is (nginx answering a constant, on the load generator's CPU),
  // so that the proxy's own cost decides; without nginx, the Node backend (said in the table). Streaming always uses
  // the Node backend.
  const tinyBackend = hasNginx ? `http://127.0.0.1:${ports.tiny}` : `http://127.0.0.1:${ports.backend}`
  const backend = `http://127.0.0.1:${ports.backend}`
  const [bin, argv] = pin(1, process.execPath, [`${root}bench/backend.mjs`, String(ports.backend)])
  children.push(spawn(bin, argv, { stdio: 'ignore' }))
  await waitForTcp(ports.backend)
  const iam = await startDevIam({ port: 0 })
  if (hasNginx) {
    const common = `daemon off; error_log ${tmp}nginx-error.log; events { worker_connections 1024; }`
    writeFileSync(`${tmp}nginx-backend.conf`, `worker_processes 1; pid ${tmp}nginx-backend.pid; ${common}
http { access_log off; client_body_temp_path ${tmp}; proxy_temp_path ${tmp}; keepalive_requests 1000000;
  server { listen 127.0.0.1:${ports.tiny}; location / { default_type application/json; return 200 '{"ok":true}'; } } }`)
    const [nbin, nargv] = pin(1, 'nginx', ['-c', `${tmp}nginx-backend.conf`, '-p', tmp])
    children.push(spawn(nbin, nargv, { stdio: 'ignore' }))
    await waitForTcp(ports.tiny)
  }
  if (hasRedis) {
    // 10,000 live revocations, loaded by the shipped gateway at start: the check runs against a full set.
    redisUrl = await startRevocationRedis(children)
  }
  else failed.set(SHIPPED, 'redis-server is not installed')

  const gateway = 'playground/.output/server/index.mjs'
  const gatewayEnv = { HOST: '127.0.0.1', APP_SESSION_SECRET: SECRET, APP_AUTH_BASE_URL: iam.url, APP_API_PROXY_TARGET: tinyBackend, APP_ACCESS_LOG: 'false' }
  const observedEnv = { ...gatewayEnv, APP_ACCESS_LOG: 'true', APP_METRICS_HOST: '127.0.0.1' }
  const logOf = name => `${tmp}${name}.log`
  /** The gateway as shipped: access log, metrics listener and Redis revocations on. */
  const shippedEnv = (port, metricsPort) => ({ ...observedEnv, PORT: String(port), APP_METRICS_PORT: String(metricsPort), APP_REDIS_URL: redisUrl })
  await startServer(BARE, process.execPath, [gateway], ports.gateway, { ...gatewayEnv, PORT: String(ports.gateway) }, logOf('bare-gateway'))
  await startServer(OBSERVED, process.execPath, [gateway], ports.observed, { ...observedEnv, PORT: String(ports.observed), APP_METRICS_PORT: String(ports.metrics) }, logOf('observed-gateway'))
  if (hasRedis) await attempt(SHIPPED, () => startServer(SHIPPED, process.execPath, [gateway], ports.shipped, shippedEnv(ports.shipped, ports.shippedMetrics), logOf('shipped-gateway')))
  await startServer(SESSION, process.execPath, [gateway], ports.mock, { ...gatewayEnv, PORT: String(ports.mock), APP_AUTH_MOCK: 'true' }, logOf('mock-gateway'))
  await attempt(FASTIFY, () => startServer(FASTIFY, process.execPath, ['bench/fastify-proxy.mjs', String(ports.fastify), tinyBackend], ports.fastify))
  await attempt(FLOOR, () => startServer(FLOOR, process.execPath, ['bench/floor-proxy.mjs', String(ports.floor), tinyBackend], ports.floor))
  await attempt(H3, () => startServer(H3, process.execPath, ['bench/h3-proxy-app/.output/server/index.mjs'], ports.h3, { HOST: '127.0.0.1', PORT: String(ports.h3), APP_TARGET: tinyBackend }))
  if (hasNginx) {
    // The same request as every other proxy (the cookie passes through), keep-alive to the same backend, one worker
    // on the same core.
    writeFileSync(`${tmp}nginx.conf`, `worker_processes 1; pid ${tmp}nginx.pid; daemon off; error_log ${tmp}nginx-error.log; events { worker_connections 1024; }
http { access_log off; client_body_temp_path ${tmp}; proxy_temp_path ${tmp}; keepalive_requests 1000000;
  upstream backend { server 127.0.0.1:${ports.tiny}; keepalive 64; keepalive_requests 1000000; }
  server { listen 127.0.0.1:${ports.nginx};
    location /api/ { proxy_pass http://backend/; proxy_http_version 1.1; proxy_set_header Connection ""; } } }`)
    await attempt(NGINX, () => startServer(NGINX, 'nginx', ['-c', `${tmp}nginx.conf`, '-p', tmp], ports.nginx))
  }
  else failed.set(NGINX, 'nginx is not installed and could not be installed')

  // WebSocket echoes: the same echo server reached directly and through a gateway (CPU 0). As for the HTTP rows, the
  // backend runs beside the load generator (CPU 1), so that the gateway's own cost decides.
  await startServer('WebSocket echo', process.execPath, ['bench/ws-echo.mjs', String(ports.wsEcho)], ports.wsEcho, {}, undefined, 1)
  await startServer('gateway for WebSockets', process.execPath, [gateway], ports.wsGateway, { ...gatewayEnv, PORT: String(ports.wsGateway), APP_API_PROXY_TARGET: `http://127.0.0.1:${ports.wsEcho}` }, logOf('ws-gateway'))

  const cookie = await loginCookie(ports.gateway)
  const mockCookie = await loginCookie(ports.mock, 'bench', 'x')
  // Every proxy gets the same request: a tiny GET carrying the browser's session cookie (about 3.5 KB).
  const all = [
    [NGINX, `http://127.0.0.1:${ports.nginx}/api/ping`, { cookie }],
    [FASTIFY, `http://127.0.0.1:${ports.fastify}/api/ping`, { cookie }],
    [FLOOR, `http://127.0.0.1:${ports.floor}/api/ping`, { cookie }],
    [H3, `http://127.0.0.1:${ports.h3}/api/ping`, { cookie }],
    [NUXT_ROUTE, `http://127.0.0.1:${ports.gateway}/api/health`, {}],
    [BARE, `http://127.0.0.1:${ports.gateway}/api/ping`, { cookie }],
    [OBSERVED, `http://127.0.0.1:${ports.observed}/api/ping`, { cookie }],
    [SHIPPED, `http://127.0.0.1:${ports.shipped}/api/ping`, { cookie }],
    [SESSION, `http://127.0.0.1:${ports.mock}/auth/session`, { cookie: mockCookie }],
  ]
  const targets = all.filter(([name]) => !failed.has(name))
  log(`load: ${hasWrk ? 'wrk' : 'autocannon'} -c32, ${SECONDS} s per run, ${ROUNDS} interleaved rounds`)
  for (const [, url, headers] of targets) await load(url, headers) // warm-up
  const runs = new Map(targets.map(([name]) => [name, []]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, url, headers] of targets) runs.get(name).push(await load(url, headers))
    log(`round ${round + 1}/${ROUNDS} done`)
  }
  // Head to head: every ratio a check names, each path loaded at once with the other.
  const pair = (a, b) => (runs.has(a) && runs.has(b) ? [all.find(([name]) => name === a), all.find(([name]) => name === b)] : undefined)
  const duels = {}
  const duelRounds = Math.max(4, ROUNDS + (ROUNDS % 2)) // even: each path goes first as often as the other
  const paired = [['observed', BARE, OBSERVED], ['shipped', FASTIFY, SHIPPED], ['bare', FASTIFY, BARE], ['floor', FASTIFY, FLOOR], ['revocation', OBSERVED, SHIPPED], ['h3', H3, BARE], ['session', NUXT_ROUTE, SESSION]]
  for (const [key, a, b] of paired) {
    const both = pair(a, b)
    if (both) duels[key] = await headToHead(both[0], both[1], duelRounds)
  }
  log('head-to-head rounds done')
  // The same duel on two new processes, loaded together from their start and never left idle. A Node process that
  // sits idle between rounds gets full collections from V8's memory reducer, and after them some of Node's own hot
  // paths can run much slower (process.nextTick through the V8 runtime: see RESULTS, 15:40 UTC); which of the two
  // processes above went through that is chance. Shown beside the verdict, which stays on the duel above.
  let freshDuel
  if (runs.has(SHIPPED) && runs.has(FASTIFY)) {
    const freshShipped = await attempt(`${SHIPPED}, new process`, () => startServer(`${SHIPPED}, new process`, process.execPath, [gateway], ports.freshShipped, shippedEnv(ports.freshShipped, ports.freshShippedMetrics), logOf('fresh-shipped-gateway')))
    const freshFastify = await attempt(`${FASTIFY}, new process`, () => startServer(`${FASTIFY}, new process`, process.execPath, ['bench/fastify-proxy.mjs', String(ports.freshFastify), tinyBackend], ports.freshFastify))
    if (freshShipped && freshFastify) {
      const fastifyTarget = [FASTIFY, `http://127.0.0.1:${ports.freshFastify}/api/ping`, { cookie }]
      const shippedTarget = [SHIPPED, `http://127.0.0.1:${ports.freshShipped}/api/ping`, { cookie }]
      // Warm-up together (a fresh process needs ~15 s of load), then the rounds right after.
      for (let i = 0; i < 4; i++) await Promise.all([fastifyTarget, shippedTarget].map(([, url, headers]) => load(url, headers)))
      freshDuel = await headToHead(fastifyTarget, shippedTarget, duelRounds)
    }
    await Promise.all([freshShipped, freshFastify].filter(Boolean).map(stop))
    log('fresh-pair duel done')
  }
  // WebSocket echoes, interleaved the same way.
  const wsTargets = [['direct', `ws://127.0.0.1:${ports.wsEcho}/live`], ['gateway', `ws://127.0.0.1:${ports.wsGateway}/api/live`]]
  const wsRates = { direct: [], gateway: [] }
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, url] of wsTargets) wsRates[name].push(wsLoad(url))
  }
  log('WebSocket echoes done')

  // Scaling: one gateway process (CPU 0) against two (CPU 0 and CPU 1), the same -c32 split over both.
  log('scaling: 1 process against 2…')
  const second = await attempt('second gateway process', () => startServer('second gateway process', process.execPath, [gateway], ports.second, { ...gatewayEnv, PORT: String(ports.second) }, logOf('second-gateway'), 1))
  const scaling = { one: [], two: [] }
  if (second) {
    const url = port => `http://127.0.0.1:${port}/api/ping`
    await Promise.all([load(url(ports.gateway), { cookie }, 16), load(url(ports.second), { cookie }, 16)]) // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      scaling.one.push((await load(url(ports.gateway), { cookie })).rps)
      const both = await Promise.all([load(url(ports.gateway), { cookie }, 16), load(url(ports.second), { cookie }, 16)])
      scaling.two.push(both[0].rps + both[1].rps)
    }
    await stop(second)
  }

  const figures = targets.map(([name]) => {
    const list = runs.get(name)
    const rates = list.map(r => r.rps)
    return { name, rps: median(rates), min: Math.min(...rates), max: Math.max(...rates), p50: median(list.map(r => r.p50)), p99: median(list.map(r => r.p99)), non2xx: list.reduce((sum, r) => sum + r.non2xx, 0) }
  })
  const by = name => figures.find(f => f.name === name)

  // Streaming through a fresh gateway: peak resident memory growth, every byte checked.
  log('streaming: 1 GiB up, 1 GiB down, 128 MiB down to a slow reader…')
  const streamEnv = { ...gatewayEnv, APP_API_PROXY_TARGET: backend, PORT: String(ports.stream) }
  const streamGateway = await startServer('stream gateway', process.execPath, [gateway], ports.stream, streamEnv, logOf('stream-gateway'))
  const streamCookie = await loginCookie(ports.stream)
  await download(ports.stream, streamCookie, 1024 * 1024)
  const baseline = memoryMiB(streamGateway.pid)
  const GiB = 1024 * 1024 * 1024
  const up = await upload(ports.stream, streamCookie, GiB)
  const down = await download(ports.stream, streamCookie, GiB)
  const slowBytes = 128 * 1024 * 1024
  const slow = await download(ports.stream, streamCookie, slowBytes, 1)
  const streaming = {
    baseline,
    growth: memoryMiB(streamGateway.pid) - baseline,
    intact: up.bytes === GiB && up.sha256 === patternSha256(GiB) && down.bytes === GiB && down.sha256 === patternSha256(GiB) && slow.bytes === slowBytes && slow.sha256 === patternSha256(slowBytes),
  }
  await stop(streamGateway)

  // Memory per stream: 200 transfers at once, the gateway with access log and metrics on (no Redis) against a bare pipe
  // proxy, each on a fresh process, alternating, two rounds each.
  log('memory per stream: 100 uploads + 100 downloads of 32 MiB at once, gateway and bare pipe proxy, 2 rounds each…')
  const perStream = { gateway: [], pipe: [], intact: true }
  for (let round = 0; round < 2; round++) {
    const proxied = await startServer('stream gateway', process.execPath, [gateway], ports.stream, { ...streamEnv, APP_ACCESS_LOG: 'true', APP_METRICS_PORT: String(ports.streamMetrics), APP_METRICS_HOST: '127.0.0.1' }, logOf('stream-gateway'))
    const result = await streamMemory(proxied, ports.stream, await loginCookie(ports.stream))
    await stop(proxied)
    const pipe = await attempt('bare node:http pipe proxy', () => startServer('bare node:http pipe proxy', process.execPath, ['bench/pipe-proxy.mjs', String(ports.pipe), backend], ports.pipe))
    if (!pipe) break
    const bare = await streamMemory(pipe, ports.pipe, 'none=1')
    await stop(pipe)
    perStream.gateway.push(result.growth)
    perStream.pipe.push(bare.growth)
    perStream.intact &&= result.intact && bare.intact
  }

  // Login: the gateway's own cost on top of the two IAM calls (keep-alive on both sides).
  log('login latency…')
  const agent = new Agent({ keepAliveTimeout: 30_000 })
  const timeIt = async (fn, n = 150) => {
    const samples = []
    for (let i = 0; i < n; i++) {
      const start = performance.now()
      await fn()
      samples.push(performance.now() - start)
    }
    return median(samples)
  }
  const body = JSON.stringify({ username: 'admin', password: 'admin123' })
  const direct = await timeIt(async () => {
    const login = await (await request(`${iam.url}/auth/auth/login-v1`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent })).body.json()
    await (await request(`${iam.url}/iam/user/userInfo`, { method: 'POST', headers: { authorization: login.body.tokenData.access_token }, dispatcher: agent })).body.json()
  })
  const viaGateway = await timeIt(async () => {
    await (await request(`http://127.0.0.1:${ports.gateway}/auth/login`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent })).body.json()
  })

  // Proof that the observed gateway did the work: its access lines and its request counter.
  const accessLines = readFileSync(logOf('observed-gateway'), 'utf8').split('\n').filter(line => line.includes('"type":"access"')).length
  const scraped = await (await fetch(`http://127.0.0.1:${ports.metrics}/metrics`)).text()
  const counted = [...scraped.matchAll(/^svc_gateway_requests_total\{[^}]*\} (\d+)/gm)].reduce((sum, match) => sum + Number(match[1]), 0)

  const spread = values => `${median(values).toFixed(2)}× (rounds ${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`
  const roundRatios = (a, b) => (runs.has(a) && runs.has(b) ? runs.get(a).map((run, i) => run.rps / runs.get(b)[i].rps) : undefined)
  const ratio = (a, b) => (a && b ? (a.rps / b.rps).toFixed(2) : '—')
  const verdict = ok => (ok === undefined ? '**not measured**' : ok ? 'holds' : '**NOT MET**')
  const nginx = by(NGINX)
  const fastify = by(FASTIFY)
  const h3 = by(H3)
  const bare = by(BARE)
  const shipped = by(SHIPPED)
  const checks = []
  const check = (what, figure, target, ok) => checks.push(`| ${what} | ${figure} | ${target} | ${verdict(ok)} |`)
  const missing = (...names) => `not measured: ${names.filter(name => failed.has(name) || !by(name)).map(name => `${name} failed`).join(', ')}`

  // The verdicts of the ratio checks stand on the head-to-head ratio: on this 2-core machine one path's standalone
  // rounds move by up to 7× within a run (see the min–max column), the head-to-head rounds by a few %.
  const shippedVsFastify = roundRatios(SHIPPED, FASTIFY)
  const shippedDuel = duels.shipped
  check('proxy as shipped vs @fastify/http-proxy (req/s; p99)', shippedVsFastify && shippedDuel
    ? `head to head ${spread(shippedDuel.ratios)}, p99 ${shippedDuel.p99.b.toFixed(2)} vs ${shippedDuel.p99.a.toFixed(2)} ms; standalone rounds ${spread(shippedVsFastify)}, p99 ${shipped.p99.toFixed(2)} vs ${fastify.p99.toFixed(2)} ms`
    : missing(SHIPPED, FASTIFY), '≥ 1.5×, p99 no worse', shippedDuel && median(shippedDuel.ratios) >= 1.5 && shippedDuel.p99.b <= shippedDuel.p99.a)
  check('the same, two new processes loaded together from their start (never idle)', freshDuel
    ? `head to head ${spread(freshDuel.ratios)}, p99 ${freshDuel.p99.b.toFixed(2)} vs ${freshDuel.p99.a.toFixed(2)} ms`
    : `not measured: ${failed.get(`${SHIPPED}, new process`) ?? failed.get(`${FASTIFY}, new process`) ?? 'the duel above was not run'}`, 'shown (the verdict is the row above)', freshDuel ? true : undefined)
  // The floor: what node:http and undici alone serve, the most any proxy on this base (the gateway's, and fastify's)
  // can reach; the gateway's share of it is the figure that names what its own work costs.
  const floorDuel = duels.floor
  check('floor (node:http + undici dispatch, nothing else) vs @fastify/http-proxy; gateway as shipped against the floor', floorDuel
    ? `head to head ${spread(floorDuel.ratios)}; the gateway as shipped serves ${shippedDuel ? (median(shippedDuel.ratios) / median(floorDuel.ratios)).toFixed(2) : '—'} of the floor`
    : missing(FLOOR, FASTIFY), 'shown (the ceiling of the 1.5× target)', floorDuel ? true : undefined)
  const bareVsFastify = roundRatios(BARE, FASTIFY)
  const bareDuel = duels.bare
  check('proxy bare vs @fastify/http-proxy (req/s; p99)', bareVsFastify && bareDuel
    ? `head to head ${spread(bareDuel.ratios)}, p99 ${bareDuel.p99.b.toFixed(2)} vs ${bareDuel.p99.a.toFixed(2)} ms; standalone rounds ${spread(bareVsFastify)}, p99 ${bare.p99.toFixed(2)} vs ${fastify.p99.toFixed(2)} ms`
    : missing(FASTIFY), '≥ 1.0×, p99 no worse', bareDuel && median(bareDuel.ratios) >= 1 && bareDuel.p99.b <= bareDuel.p99.a)
  const observedVsBare = roundRatios(OBSERVED, BARE)
  check('proxy with access log + metrics on vs off', `head to head ${spread(duels.observed.ratios)}; standalone rounds ${spread(observedVsBare)}; ${accessLines} access lines written, ${counted} requests counted`, '≥ 0.90×', median(duels.observed.ratios) >= 0.9)
  const shippedVsObserved = roundRatios(SHIPPED, OBSERVED)
  check('proxy holding 10,000 revocations (Redis) vs none', shippedVsObserved && duels.revocation ? `head to head ${spread(duels.revocation.ratios)}; standalone rounds ${spread(shippedVsObserved)}; the check itself ${crypto.revokedNs.toFixed(0)} ns a request` : missing(SHIPPED), '≥ 0.95×', duels.revocation && median(duels.revocation.ratios) >= 0.95)
  const bareVsH3 = roundRatios(BARE, H3)
  check('proxy bare vs h3 proxyRequest', bareVsH3 && duels.h3 ? `head to head ${spread(duels.h3.ratios)}; standalone rounds ${spread(bareVsH3)}` : missing(H3), '≥ 4×', duels.h3 && median(duels.h3.ratios) >= 4)
  if (nginx && bare && nginx.rps < bare.rps) log('nginx measured below the gateway: check the set-up (worker count, keep-alive, CPU pinning) before writing it down')
  const wsRatios = wsRates.gateway.map((rate, i) => rate / wsRates.direct[i])
  check('WebSocket echoes (32 connections × 16 in flight, 32 bytes) through the gateway vs direct', `${spread(wsRatios)}; ${Math.round(median(wsRates.gateway))} vs ${Math.round(median(wsRates.direct))} messages/s`, '≥ 0.5×', median(wsRatios) >= 0.5)
  const sessionVsRoute = roundRatios(SESSION, NUXT_ROUTE)
  check('GET /auth/session (mock) vs constant Nuxt route', duels.session ? `head to head ${spread(duels.session.ratios)}; standalone rounds ${spread(sessionVsRoute)}` : spread(sessionVsRoute), '≥ 0.8×', duels.session && median(duels.session.ratios) >= 0.8)
  check('streaming peak RSS growth (1 GiB up, 1 GiB down, 128 MiB slow reader)', `${streaming.growth.toFixed(1)} MiB over ${streaming.baseline.toFixed(1)} MiB; bytes ${streaming.intact ? 'all match (SHA-256)' : 'MISMATCH'}`, '< 48 MiB', streaming.growth < 48 && streaming.intact)
  const memoryRatios = perStream.gateway.map((growth, i) => growth / perStream.pipe[i])
  check('memory per stream: peak RSS growth, 100 uploads + 100 downloads of 32 MiB at once (25 slow readers), gateway with access log + metrics vs bare node:http pipe proxy', memoryRatios.length
    ? `${spread(memoryRatios)}; gateway ${perStream.gateway.map(v => v.toFixed(0)).join(', ')} MiB, pipe proxy ${perStream.pipe.map(v => v.toFixed(0)).join(', ')} MiB; bytes ${perStream.intact ? 'all match (SHA-256)' : 'MISMATCH'}`
    : 'not measured: the pipe proxy failed', '≤ 1.25×', memoryRatios.length ? median(memoryRatios) <= 1.25 && perStream.intact : undefined)
  const scaleRatios = scaling.two.map((rate, i) => rate / scaling.one[i])
  check('two gateway processes vs one (same -c32; the second process shares CPU 1 with wrk and the backend)', scaleRatios.length ? `${spread(scaleRatios)}; ${Math.round(median(scaling.two))} vs ${Math.round(median(scaling.one))} req/s` : 'not measured: the second process failed', 'shown (no target on 2 cores)', scaleRatios.length ? true : undefined)
  check('login: gateway p50 − direct IAM calls p50', `${(viaGateway - direct).toFixed(2)} ms (${viaGateway.toFixed(2)} vs ${direct.toFixed(2)})`, '≤ 2 ms', viaGateway - direct <= 2)
  check(`unseal / seal (2.4 KB token, ${crypto.cookieBytes}-byte cookie value)`, `${crypto.unsealUs.toFixed(1)} µs / ${crypto.sealUs.toFixed(1)} µs; a seen cookie ${crypto.cachedUs.toFixed(2)} µs`, 'unseal ≤ ~15 µs', crypto.unsealUs <= 15)

  const lines = [
    ...head.map(line => `${line}  `),
    `Load: ${hasWrk ? 'wrk' : 'autocannon'} -c32, ${SECONDS} s a run, ${ROUNDS} interleaved rounds; backend of the throughput rows: ${hasNginx ? 'nginx answering a constant' : 'the Node backend (no nginx)'}. ${new Date().toISOString()}`,
    '',
    '| Path | req/s (median) | rounds min–max | p50 ms | p99 ms | × nginx | × fastify | × h3 proxyRequest | non-2xx |',
    '|---|---|---|---|---|---|---|---|---|',
    ...all.map(([name]) => {
      const f = by(name)
      if (!f) return `| ${name} | **FAILED**: ${failed.get(name) ?? 'not run'} | | | | | | | |`
      return `| ${f.name} | ${Math.round(f.rps)} | ${Math.round(f.min)}–${Math.round(f.max)} | ${f.p50.toFixed(2)} | ${f.p99.toFixed(2)} | ${ratio(f, nginx)} | ${ratio(f, fastify)} | ${ratio(f, h3)} | ${f.non2xx} |`
    }),
    '',
    '| Check | Figure | Target | |',
    '|---|---|---|---|',
    ...checks,
    ...(failed.size ? ['', `Failed to start: ${[...failed].map(([name, reason]) => `${name} (${reason})`).join('; ')}`] : []),
  ]
  console.log(`\n${lines.join('\n')}\n`)
  writeFileSync(`${tmp}last-table.md`, `${lines.join('\n')}\n`)
}

if (process.env.BENCH_CRYPTO_CHILD === '1') {
  process.stdout.write(JSON.stringify(await cryptoFigures()))
  process.exit(0)
}
try {
  await main()
}
catch (error) {
  // Said, never swallowed: a bench that fails must not look like one that passed.
  console.error('[bench] failed:', error)
  process.exitCode = 1
}
finally {
  // SIGTERM first: nginx killed with SIGKILL leaves its workers running (and holding the ports of the next run).
  for (const child of children) child.kill('SIGTERM')
  await new Promise(resolve => setTimeout(resolve, 1_000))
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  process.exit(process.exitCode ?? 0)
}
