// @ts-check
/**
 * `npm run bench`: throughput of /api/** against nginx, @fastify/http-proxy, a naive h3 proxyRequest route and a
 * plain Nuxt route; the same with access log + metrics on; WebSocket echoes through the gateway vs direct;
 * GET /auth/session; streaming memory; login overhead; seal/unseal micro-benchmarks.
 * Prints one table and writes bench/.tmp/last-table.md. Servers (proxies and backend) run on CPU 0, the load
 * generator on CPU 1 (taskset).
 * BENCH_SKIP_BUILD=1 reuses the builds; BENCH_SECONDS (5) and BENCH_ROUNDS (3) set the length.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import { cpus } from 'node:os'
import { fileURLToPath } from 'node:url'
import { Agent, request } from 'undici'
import { startDevIam } from '../dev/iam.mjs'
import { patternChunk, patternSha256 } from '../dev/pattern.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const tmp = fileURLToPath(new URL('./.tmp/', import.meta.url))
mkdirSync(tmp, { recursive: true })
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const SECRET = randomBytes(32).toString('hex')
const children = []
const log = (...args) => console.log('[bench]', ...args)

function has(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`]).status === 0
}

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

const pin = (cpu, command, args) => (has('taskset') && cpus().length > 1 ? ['taskset', ['-c', String(cpu), command, ...args]] : [command, args])

/** Starts a process pinned to `cpu` (0) and waits until its port answers; its stdout goes to `logFile` when given. */
async function startServer(name, command, args, port, env = {}, logFile = undefined, cpu = 0) {
  const [bin, argv] = pin(cpu, command, args)
  const stdout = logFile ? openSync(logFile, 'w') : 'ignore'
  const child = spawn(bin, argv, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', stdout, 'pipe'] })
  let errors = ''
  child.stderr.on('data', (chunk) => {
    errors += chunk
  })
  children.push(child)
  const deadline = Date.now() + 20_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited: ${errors}`)
    const up = await new Promise((resolve) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/', method: 'HEAD' }, (res) => {
        res.resume()
        resolve(true)
      })
      req.on('error', () => resolve(false))
      req.end()
    })
    if (up) return child
    if (Date.now() > deadline) throw new Error(`${name} did not start: ${errors}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

/** Waits until something accepts TCP connections on a loopback port (a server that does not speak HTTP). */
async function waitForTcp(port) {
  const deadline = Date.now() + 10_000
  while (!(await new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.end()
      resolve(true)
    })
    socket.on('error', () => resolve(false))
  }))) {
    if (Date.now() > deadline) throw new Error(`nothing listens on port ${port}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

function build(target) {
  log(`building ${target}…`)
  const result = spawnSync('npx', ['nuxt', 'build', target], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] })
  if (result.status !== 0) throw new Error(`build of ${target} failed`)
}

/** One load run; returns req/s, p50 and p99 in ms. */
function load(url, headers = {}) {
  if (has('wrk')) {
    const headerArgs = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`])
    const [bin, argv] = pin(1, 'wrk', ['-t1', '-c32', `-d${SECONDS}s`, '--latency', ...headerArgs, url])
    const out = execFileSync(bin, argv, { encoding: 'utf8' })
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0)
    const toMs = (text) => {
      const [, value, unit] = /([\d.]+)(us|ms|s)/.exec(text) ?? [null, '0', 'ms']
      return Number(value) * (unit === 'us' ? 0.001 : unit === 's' ? 1000 : 1)
    }
    const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0)
    return { rps, p50: toMs(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? '0ms'), p99: toMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? '0ms'), non2xx }
  }
  const headerArgs = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}=${v}`])
  const [bin, argv] = pin(1, 'npx', ['autocannon', '-c', '32', '-d', String(SECONDS), '-j', ...headerArgs, url])
  const out = JSON.parse(execFileSync(bin, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }))
  return { rps: out.requests.average, p50: out.latency.p50, p99: out.latency.p99, non2xx: out.non2xx }
}

/** One WebSocket echo run from CPU 1; returns echoed messages a second. */
function wsLoad(url) {
  const [bin, argv] = pin(1, process.execPath, [`${root}bench/ws-load.mjs`, url, '32', String(SECONDS), '32', '16'])
  return JSON.parse(execFileSync(bin, argv, { encoding: 'utf8' })).rate
}

const median = values => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/** VmHWM (peak resident set) of a process, in MiB. */
function peakMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024
}

/** Streams `bytes` up through the gateway; resolves with what the backend counted. */
function upload(port, cookie, bytes) {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/api/sink', method: 'POST', headers: { cookie, 'content-type': 'application/octet-stream', 'content-length': bytes } }, (res) => {
      let body = ''
      res.on('data', (chunk) => {
        body += chunk
      })
      res.on('end', () => resolve(JSON.parse(body)))
    })
    req.on('error', reject)
    let index = 0
    let sent = 0
    const pump = () => {
      while (sent < bytes) {
        const chunk = patternChunk(index++)
        sent += chunk.length
        if (!req.write(chunk)) return void req.once('drain', pump)
      }
      req.end()
    }
    pump()
  })
}

/** Downloads `bytes` through the gateway, optionally pausing `delayMs` after each chunk; returns size and hash. */
function download(port, cookie, bytes, delayMs = 0) {
  return new Promise((resolve, reject) => {
    httpRequest({ host: '127.0.0.1', port, path: `/api/stream?bytes=${bytes}`, headers: { cookie } }, (res) => {
      const hash = createHash('sha256')
      let received = 0
      res.on('data', (chunk) => {
        hash.update(chunk)
        received += chunk.length
        if (delayMs) {
          res.pause()
          setTimeout(() => res.resume(), delayMs)
        }
      })
      res.on('end', () => resolve({ bytes: received, sha256: hash.digest('hex') }))
      res.on('error', reject)
    }).on('error', reject).end()
  })
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
  if (process.env.BENCH_SKIP_BUILD !== '1' || !existsSync(`${root}playground/.output/server/index.mjs`)) build('playground')
  if (process.env.BENCH_SKIP_BUILD !== '1' || !existsSync(`${root}bench/h3-proxy-app/.output/server/index.mjs`)) build('bench/h3-proxy-app')

  const crypto = await cryptoFigures() // first, on a quiet process

  const ports = { backend: 4100, gateway: 4101, fastify: 4102, h3: 4103, nginx: 4104, mock: 4105, stream: 4106, tiny: 4107, redis: 4108, revoked: 4109, observed: 4110, metrics: 4111, wsGateway: 4112, wsEcho: 4113 }
  // Throughput runs proxy to the cheapest backend there is (nginx answering a constant, on the load generator's CPU),
  // so that the proxy's own cost decides; without nginx, the Node backend. Streaming always uses the Node backend.
  const tinyBackend = hasNginx ? `http://127.0.0.1:${ports.tiny}` : `http://127.0.0.1:${ports.backend}`
  const backend = `http://127.0.0.1:${ports.backend}`
  const [bin, argv] = pin(0, process.execPath, [`${root}bench/backend.mjs`, String(ports.backend)])
  const backendChild = spawn(bin, argv, { stdio: 'ignore' })
  children.push(backendChild)
  const iam = await startDevIam({ port: 0 })
  await new Promise(resolve => setTimeout(resolve, 300))

  // Access lines and metrics off, except on the 'observed' gateway: the same build with both on, its log in a file.
  const gatewayEnv = { HOST: '127.0.0.1', APP_SESSION_SECRET: SECRET, APP_AUTH_BASE_URL: iam.url, APP_API_PROXY_TARGET: tinyBackend, APP_ACCESS_LOG: 'false' }
  await startServer('gateway', process.execPath, ['playground/.output/server/index.mjs'], ports.gateway, { ...gatewayEnv, PORT: String(ports.gateway) })
  const accessLogFile = `${tmp}observed-gateway.log`
  await startServer('gateway, access log + metrics', process.execPath, ['playground/.output/server/index.mjs'], ports.observed, { ...gatewayEnv, PORT: String(ports.observed), APP_ACCESS_LOG: 'true', APP_METRICS_PORT: String(ports.metrics), APP_METRICS_HOST: '127.0.0.1' }, accessLogFile)
  await startServer('mock gateway', process.execPath, ['playground/.output/server/index.mjs'], ports.mock, { ...gatewayEnv, PORT: String(ports.mock), APP_AUTH_MOCK: 'true' })
  await startServer('fastify', process.execPath, ['bench/fastify-proxy.mjs', String(ports.fastify), tinyBackend], ports.fastify)
  await startServer('h3 proxyRequest', process.execPath, ['bench/h3-proxy-app/.output/server/index.mjs'], ports.h3, { HOST: '127.0.0.1', PORT: String(ports.h3), APP_TARGET: tinyBackend })
  if (hasNginx) {
    const common = `daemon off; error_log ${tmp}nginx-error.log; events { worker_connections 1024; }`
    writeFileSync(`${tmp}nginx-backend.conf`, `worker_processes 1; pid ${tmp}nginx-backend.pid; ${common}
http { access_log off; client_body_temp_path ${tmp}; proxy_temp_path ${tmp}; keepalive_requests 1000000;
  server { listen 127.0.0.1:${ports.tiny}; location / { default_type application/json; return 200 '{"ok":true}'; } } }`)
    writeFileSync(`${tmp}nginx.conf`, `worker_processes 1; pid ${tmp}nginx.pid; ${common}
http { access_log off; client_body_temp_path ${tmp}; proxy_temp_path ${tmp}; keepalive_requests 1000000;
  upstream backend { server 127.0.0.1:${ports.tiny}; keepalive 64; keepalive_requests 1000000; }
  server { listen 127.0.0.1:${ports.nginx};
    location /api/ { proxy_pass http://backend/; proxy_http_version 1.1; proxy_set_header Connection ""; } } }`)
    const [nbin, nargv] = pin(1, 'nginx', ['-c', `${tmp}nginx-backend.conf`, '-p', tmp])
    children.push(spawn(nbin, nargv, { stdio: 'ignore' }))
    await startServer('nginx', 'nginx', ['-c', `${tmp}nginx.conf`, '-p', tmp], ports.nginx)
  }

  // The same gateway holding 10,000 live revocations (loaded from Redis at start): the cost of the revocation check.
  const hasRedis = ensurePackage('redis-server', 'redis-server')
  if (hasRedis) {
    const [rbin, rargv] = pin(1, 'redis-server', ['--port', String(ports.redis), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'])
    children.push(spawn(rbin, rargv, { stdio: 'ignore' }))
    await waitForTcp(ports.redis)
    const { Redis } = await import('ioredis')
    const client = new Redis(`redis://127.0.0.1:${ports.redis}`)
    const batch = client.pipeline()
    for (let i = 0; i < 10_000; i++) {
      const sid = randomBytes(12).toString('base64url')
      batch.set(`svc:rev:s:${sid}`, JSON.stringify({ kind: 'session', sid, userId: `u-bench-${i}`, iat: Date.now() }), 'PX', 8 * 3_600_000)
    }
    await batch.exec()
    client.disconnect()
    await startServer('gateway with revocations', process.execPath, ['playground/.output/server/index.mjs'], ports.revoked, { ...gatewayEnv, PORT: String(ports.revoked), APP_REDIS_URL: `redis://127.0.0.1:${ports.redis}` })
  }

  // WebSocket echoes: the same echo server reached directly and through a gateway (CPU 0). As for the HTTP rows, the
  // backend runs beside the load generator (CPU 1), so that the gateway's own cost decides.
  await startServer('WebSocket echo', process.execPath, ['bench/ws-echo.mjs', String(ports.wsEcho)], ports.wsEcho, {}, undefined, 1)
  await startServer('gateway for WebSockets', process.execPath, ['playground/.output/server/index.mjs'], ports.wsGateway, { ...gatewayEnv, PORT: String(ports.wsGateway), APP_API_PROXY_TARGET: `http://127.0.0.1:${ports.wsEcho}` })

  const cookie = await loginCookie(ports.gateway)
  const mockCookie = await loginCookie(ports.mock, 'bench', 'x')
  // Every proxy gets the same request: a tiny GET carrying the browser's session cookie (about 3.5 KB).
  const targets = [
    ...(hasNginx ? [['nginx proxy_pass (keepalive)', `http://127.0.0.1:${ports.nginx}/api/ping`, { cookie }]] : []),
    ['@fastify/http-proxy', `http://127.0.0.1:${ports.fastify}/api/ping`, { cookie }],
    ['h3 proxyRequest in Nuxt', `http://127.0.0.1:${ports.h3}/api/ping`, { cookie }],
    ['Nuxt route, constant (no proxy)', `http://127.0.0.1:${ports.gateway}/api/health`, {}],
    ['gateway /api/** (live session)', `http://127.0.0.1:${ports.gateway}/api/ping`, { cookie }],
    ['gateway /api/** (access log + metrics on)', `http://127.0.0.1:${ports.observed}/api/ping`, { cookie }],
    ...(hasRedis ? [['gateway /api/** (10,000 revocations held)', `http://127.0.0.1:${ports.revoked}/api/ping`, { cookie }]] : []),
    ['gateway GET /auth/session (mock)', `http://127.0.0.1:${ports.mock}/auth/session`, { cookie: mockCookie }],
  ]
  log(`load: ${hasWrk ? 'wrk' : 'autocannon'} -c32, ${SECONDS} s per run, ${ROUNDS} interleaved rounds`)
  for (const [, url, headers] of targets) load(url, headers) // warm-up
  const runs = new Map(targets.map(([name]) => [name, []]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, url, headers] of targets) runs.get(name).push(load(url, headers))
    log(`round ${round + 1}/${ROUNDS} done`)
  }
  // WebSocket echoes, interleaved the same way.
  const wsTargets = [['direct', `ws://127.0.0.1:${ports.wsEcho}/live`], ['gateway', `ws://127.0.0.1:${ports.wsGateway}/api/live`]]
  const wsRates = { direct: [], gateway: [] }
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, url] of wsTargets) wsRates[name].push(wsLoad(url))
  }
  log('WebSocket echoes done')
  const wsDirect = median(wsRates.direct)
  const wsGateway = median(wsRates.gateway)

  const figures = targets.map(([name]) => {
    const list = runs.get(name)
    const rates = list.map(r => r.rps)
    return { name, rps: median(rates), min: Math.min(...rates), max: Math.max(...rates), p50: median(list.map(r => r.p50)), p99: median(list.map(r => r.p99)), non2xx: list.reduce((sum, r) => sum + r.non2xx, 0) }
  })
  // A ratio of two paths measured round by round (adjacent runs share the machine's mood): median and min–max.
  const spread = values => `${median(values).toFixed(2)}× (rounds ${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`
  const roundRatio = (a, b) => (runs.has(a) && runs.has(b) ? spread(runs.get(a).map((run, i) => run.rps / runs.get(b)[i].rps)) : '—')
  const by = name => figures.find(f => f.name === name)

  // Streaming through a fresh gateway: peak resident memory growth, every byte checked.
  log('streaming: 1 GiB up, 1 GiB down, 128 MiB down to a slow reader…')
  const streamGateway = await startServer('stream gateway', process.execPath, ['playground/.output/server/index.mjs'], ports.stream, { ...gatewayEnv, APP_API_PROXY_TARGET: backend, PORT: String(ports.stream) })
  const streamCookie = await loginCookie(ports.stream)
  await download(ports.stream, streamCookie, 1024 * 1024)
  const baseline = peakMiB(streamGateway.pid)
  const GiB = 1024 * 1024 * 1024
  const up = await upload(ports.stream, streamCookie, GiB)
  const down = await download(ports.stream, streamCookie, GiB)
  const slowBytes = 128 * 1024 * 1024
  const slow = await download(ports.stream, streamCookie, slowBytes, 1)
  const streaming = {
    baseline,
    growth: peakMiB(streamGateway.pid) - baseline,
    upOk: up.bytes === GiB && up.sha256 === patternSha256(GiB),
    downOk: down.bytes === GiB && down.sha256 === patternSha256(GiB),
    slowOk: slow.bytes === slowBytes && slow.sha256 === patternSha256(slowBytes),
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
  const fastify = by('@fastify/http-proxy')
  const h3 = by('h3 proxyRequest in Nuxt')
  const nginx = by('nginx proxy_pass (keepalive)')
  const nuxtRoute = by('Nuxt route, constant (no proxy)')
  const gateway = by('gateway /api/** (live session)')
  const session = by('gateway GET /auth/session (mock)')
  const revoking = by('gateway /api/** (10,000 revocations held)')
  const observed = by('gateway /api/** (access log + metrics on)')
  // Proof that the observed gateway did the work: its access lines and its request counter.
  const accessLines = readFileSync(accessLogFile, 'utf8').split('\n').filter(line => line.includes('"type":"access"')).length
  const scraped = await (await fetch(`http://127.0.0.1:${ports.metrics}/metrics`)).text()
  const counted = [...scraped.matchAll(/^svc_gateway_requests_total\{[^}]*\} (\d+)/gm)].reduce((sum, match) => sum + Number(match[1]), 0)
  const ratio = (a, b) => (a && b ? (a.rps / b.rps).toFixed(2) : '—')
  const lines = [
    '| Path | req/s (median) | rounds min–max | p50 ms | p99 ms | × nginx | × fastify | × h3 proxyRequest | non-2xx |',
    '|---|---|---|---|---|---|---|---|---|',
    ...figures.map(f => `| ${f.name} | ${Math.round(f.rps)} | ${Math.round(f.min)}–${Math.round(f.max)} | ${f.p50.toFixed(2)} | ${f.p99.toFixed(2)} | ${ratio(f, nginx)} | ${ratio(f, fastify)} | ${ratio(f, h3)} | ${f.non2xx} |`),
    '',
    '| Check | Figure | Target |',
    '|---|---|---|',
    `| proxy vs @fastify/http-proxy | ${ratio(gateway, fastify)}× req/s, p99 ${gateway.p99.toFixed(2)} vs ${fastify.p99.toFixed(2)} ms | ≥ 1.0×, p99 no worse |`,
    `| proxy vs h3 proxyRequest | ${ratio(gateway, h3)}× | ≥ 4× |`,
    `| proxy holding 10,000 revocations vs none | ${revoking ? `${ratio(revoking, gateway)}×` : 'not measured (no redis-server)'}; the check itself ${crypto.revokedNs.toFixed(0)} ns a request (${(crypto.revokedNs / 1e9 * gateway.rps * 100).toFixed(3)}% of the proxy's time) | ≥ 0.95× |`,
    `| proxy with access log + metrics on vs off | ${roundRatio('gateway /api/** (access log + metrics on)', 'gateway /api/** (live session)')}; medians ${ratio(observed, gateway)}× (${accessLines} access lines written, ${counted} requests counted) | ≥ 0.90× |`,
    `| WebSocket echoes (32 connections × 16 in flight, 32-byte messages) through the gateway vs direct | ${spread(wsRates.gateway.map((rate, i) => rate / wsRates.direct[i]))}; ${Math.round(wsGateway)} vs ${Math.round(wsDirect)} messages/s | ≥ 0.5× |`,
    `| GET /auth/session (mock) vs constant Nuxt route | ${ratio(session, nuxtRoute)}× | ≥ 0.8× |`,
    `| streaming peak RSS growth (1 GiB up, 1 GiB down, 128 MiB slow reader) | ${streaming.growth.toFixed(1)} MiB over ${streaming.baseline.toFixed(1)} MiB; bytes ${streaming.upOk && streaming.downOk && streaming.slowOk ? 'all match (SHA-256)' : 'MISMATCH'} | < 48 MiB |`,
    `| login: gateway p50 − direct IAM calls p50 | ${(viaGateway - direct).toFixed(2)} ms (${viaGateway.toFixed(2)} vs ${direct.toFixed(2)}) | ≤ 2 ms |`,
    `| unseal / seal (2.4 KB token, ${crypto.cookieBytes}-byte cookie value) | ${crypto.unsealUs.toFixed(1)} µs / ${crypto.sealUs.toFixed(1)} µs; a seen cookie ${crypto.cachedUs.toFixed(2)} µs | unseal ≤ ~15 µs |`,
  ]
  console.log(`\n${lines.join('\n')}\n`)
  const cpu = cpus()[0]?.model ?? 'unknown'
  writeFileSync(`${tmp}last-table.md`, `${lines.join('\n')}\n\nMachine: ${cpus().length} cores, ${cpu}. Load: ${hasWrk ? 'wrk' : 'autocannon'}. ${new Date().toISOString()}\n`)
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
