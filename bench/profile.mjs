// @ts-check
/**
 * Where a proxied request's time goes: runs the gateway as shipped (access log through a collector pipe, metrics
 * listener, Redis revocation) under `node --cpu-prof` on CPU 0, loads /api/** with wrk from CPU 1 (the backend is nginx
 * answering a constant, as in `npm run bench`), and sorts the profile's samples into parts: the kernel writes, Node's
 * HTTP server, undici, Nitro, the gateway's own routing, headers, session, logging and metrics, GC.
 * `npm run bench:profile` after `npm run build`; `node bench/profile.mjs [server entry] [seconds]` to profile another
 * build; `node bench/profile.mjs --read file.cpuprofile [requests]` to sort a profile already taken.
 */
import { execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { startDevIam } from '../dev/iam.mjs'
import { freePort } from './processes.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const tmp = fileURLToPath(new URL('./.tmp/profile/', import.meta.url))

/**
 * The parts. A sample whose leaf is a kernel write stands for that syscall; any other goes to the innermost frame of
 * known code: one of the gateway's own functions (by name, in Nitro's bundle), or a library (by file).
 */
const OWN = [
  ['logging (access line, destination)', /^(writeAccessLine|accessLineMembers|flush|write|jsonLineWriter|loggedPath)$/],
  ['metrics', /^(countExchange|observe|count|entries)$/],
  ['session (cookie, cache, revocation)', /^(openLiveSession|readSingleCookie|cookieValues|open|liveToken|isSessionRevoked|isRevoked)$/],
  ['headers (request and answer rules)', /^(backendRequestHeaders|browserResponseHeaders|withoutHopHeaders|connectionTokens|clientInfo|forwardContext|plainIp|runProxyRequestHooks)$/],
  ['routing and gate (path, decision, request id)', /^(routerPath|decodePath|contractRoute|probeOf|isApiPath|backendPath|climbs|acceptedRequestId|observeRequest|applyServerTimeouts|refuseCrossOrigin|nitroApp\.h3App\.handler|lookup|decideApiRequest|pathSpellings)$/],
  ['proxy (dispatch set-up, answer hand-over)', /^(proxyApiRequest|onRequestStart|onResponseStart|onResponseData|onResponseEnd|onResponseError|requestBody|hasBody|fail)$/],
]
const LIBRARIES = [
  ['logging (access line, destination)', url => /sonic-boom|\/pino|^node:fs$/.test(url)],
  ['metrics', url => url.includes('prom-client')],
  ['undici (dispatch, HTTP/1.1 client, parser)', url => url.includes('/undici/') || url.startsWith('wasm://')],
  ['Nitro and h3 (event, listener)', url => url.includes('/chunks/nitro/') || url.includes('/h3/')],
  ['Node HTTP server and streams', url => url.startsWith('node:')],
]

/** The part of the innermost frame of known code. */
function partOf(stack) {
  for (const frame of stack) {
    if (frame.url.includes('/chunks/nitro/')) {
      const own = OWN.find(([, pattern]) => pattern.test(frame.functionName))
      if (own) return own[0]
    }
    const library = LIBRARIES.find(([, test]) => test(frame.url))
    if (library) return library[0]
  }
  return 'other'
}

/** Sorts a profile's samples into the parts; returns [part, share, µs a request] rows. */
export function breakdown(profile, requests) {
  const nodes = new Map(profile.nodes.map(node => [node.id, node]))
  const parent = new Map()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const time = new Map()
  let busy = 0
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0
    const leaf = nodes.get(id).callFrame
    if (leaf.functionName === '(idle)') return
    const stack = []
    for (let at = id; at !== undefined; at = parent.get(at)) stack.push(nodes.get(at).callFrame)
    if (stack.some(frame => /module_job|cjs\/loader|esm\/translators/.test(frame.url))) return // start-up
    busy += delta
    let part
    if (leaf.functionName === 'writev') part = 'kernel: answer written to the client'
    else if (/^write(Latin1|Utf8|Buffer)String$|^writeBuffer$/.test(leaf.functionName) && stack.some(frame => frame.url.includes('/undici/'))) part = 'kernel: request written to the backend'
    else if (leaf.functionName === 'writeString' || leaf.functionName === 'writeBuffer') part = 'logging (access line, destination)'
    else if (leaf.functionName === '(garbage collector)') part = 'garbage collection'
    else if (leaf.functionName === '(program)') part = 'native (libuv, parsers, V8)'
    else part = partOf(stack)
    time.set(part, (time.get(part) ?? 0) + delta)
  })
  return [...time].sort((a, b) => b[1] - a[1]).map(([part, us]) => [part, us / busy, requests ? us / requests : undefined])
}

function print(rows, requests) {
  console.log('| Part | Share of busy time | µs a request (under the profiler) |')
  console.log('|---|---|---|')
  for (const [part, share, perRequest] of rows) console.log(`| ${part} | ${(share * 100).toFixed(1)}% | ${perRequest === undefined ? '—' : perRequest.toFixed(1)} |`)
  if (requests) console.log(`\n${requests} requests profiled.`)
}

async function waitFor(url) {
  for (let i = 0; i < 200; i++) {
    try {
      await fetch(url)
      return
    }
    catch {
      await new Promise(resolve => setTimeout(resolve, 100))
    }
  }
  throw new Error(`${url} did not answer`)
}

async function profileRun(entry, seconds) {
  rmSync(tmp, { recursive: true, force: true })
  mkdirSync(tmp, { recursive: true })
  const children = []
  const onCpu = (cpu, command, args, options = {}) => {
    const child = spawn('taskset', ['-c', String(cpu), command, ...args], { stdio: 'ignore', ...options })
    children.push(child)
    return child
  }
  try {
    const [backend, redis, port, metrics] = [await freePort(), await freePort(), await freePort(), await freePort()]
    writeFileSync(`${tmp}nginx.conf`, `worker_processes 1; pid ${tmp}nginx.pid; daemon off; error_log ${tmp}nginx-error.log; events { worker_connections 1024; }
http { access_log off; client_body_temp_path ${tmp}; proxy_temp_path ${tmp}; keepalive_requests 1000000;
  server { listen 127.0.0.1:${backend}; location / { default_type application/json; return 200 '{"ok":true}'; } } }`)
    onCpu(1, 'nginx', ['-c', `${tmp}nginx.conf`, '-p', tmp])
    onCpu(1, 'redis-server', ['--port', String(redis), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'])
    const iam = await startDevIam({ port: 0 })
    const collector = onCpu(1, 'cat', [], { stdio: ['pipe', openSync(`${tmp}gateway.log`, 'w'), 'ignore'] })
    const gateway = onCpu(0, process.execPath, ['--cpu-prof', `--cpu-prof-dir=${tmp}`, entry], {
      cwd: root,
      stdio: ['ignore', collector.stdin, 'inherit'],
      env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), APP_SESSION_SECRET: randomBytes(32).toString('hex'), APP_AUTH_BASE_URL: iam.url, APP_API_PROXY_TARGET: `http://127.0.0.1:${backend}`, APP_ACCESS_LOG: 'true', APP_METRICS_PORT: String(metrics), APP_METRICS_HOST: '127.0.0.1', APP_REDIS_URL: `redis://127.0.0.1:${redis}` },
    })
    await waitFor(`http://127.0.0.1:${port}/healthz`)
    const login = await fetch(`http://127.0.0.1:${port}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'admin123' }) })
    const cookie = login.headers.getSetCookie().map(line => line.split(';')[0]).join('; ')
    const out = execFileSync('taskset', ['-c', '1', 'wrk', '-t1', '-c32', `-d${seconds}s`, '-H', `cookie: ${cookie}`, `http://127.0.0.1:${port}/api/ping`], { encoding: 'utf8' })
    const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0)
    const exited = new Promise(resolve => gateway.once('exit', resolve))
    gateway.kill('SIGTERM')
    await exited
    const file = readdirSync(tmp).find(name => name.endsWith('.cpuprofile'))
    if (!file) throw new Error('the gateway wrote no profile')
    await iam.close()
    return { profile: JSON.parse(readFileSync(`${tmp}${file}`, 'utf8')), requests, file: `${tmp}${file}` }
  }
  finally {
    for (const child of children) child.kill('SIGTERM')
  }
}

if (process.argv[2] === '--read') {
  const requests = Number(process.argv[4] ?? 0) || undefined
  print(breakdown(JSON.parse(readFileSync(process.argv[3], 'utf8')), requests), requests)
}
else {
  const entry = process.argv[2] ?? 'playground/.output/server/index.mjs'
  const { profile, requests, file } = await profileRun(entry, Number(process.argv[3] ?? 10))
  print(breakdown(profile, requests), requests)
  console.log(`Profile: ${file}`)
  process.exit(0)
}
