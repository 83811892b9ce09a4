// @ts-check
/**
 * `npm run bench:ab -- <before> <after>`: the /api/** proxy of two builds of the gateway, head to head in one run (a
 * change measured against the build before it). Each folder is a checkout with its playground built (`npm ci && npx
 * nuxt build playground` there; `git worktree add` makes one for an older commit). Both run "as shipped" (access
 * log, metrics listener, Redis revocations with 10,000 held), as bench/run.mjs runs it: gateways on CPU 0 (taskset),
 * wrk, the backend, the redis-servers and the log collectors on CPU 1, stdout piped to `cat > file`, a tiny GET
 * /api/ping carrying the ~3.5 KB session cookie of a development-IAM login. Warm-up rounds, then rounds in which both
 * are loaded at once (the machine's mood hits both alike); RUNS fresh pairs of processes. Prints each round's
 * after/before ratio and each run's median. Loopback only; every load is bounded.
 * RUNS (2), ROUNDS (8), SECONDS_PER_RUN (5), WARMUPS (3). Needs wrk (Debian package) and redis-server.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { startDevIam } from '../dev/iam.mjs'
import { pin, stop, waitForHttp, waitForTcp, wrkMs } from './processes.mjs'

const RUNS = Number(process.env.RUNS ?? 2)
const ROUNDS = Number(process.env.ROUNDS ?? 8)
const SECONDS = Number(process.env.SECONDS_PER_RUN ?? 5)
const WARMUPS = Number(process.env.WARMUPS ?? 3)
const OUT = fileURLToPath(new URL('./.tmp/ab/', import.meta.url))
mkdirSync(OUT, { recursive: true })
const [beforeDir, afterDir] = process.argv.slice(2)
if (!beforeDir || !afterDir) {
  console.error('usage: npm run bench:ab -- <before checkout> <after checkout> (each with its playground built)')
  process.exit(2)
}
const SECRET = randomBytes(32).toString('hex')
const children = []
const log = (...a) => console.log(`[ab ${new Date().toISOString().slice(11, 19)}]`, ...a)
const sleep = ms => new Promise(r => setTimeout(r, ms))
function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length / 2
  return sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[middle - 1] + sorted[middle]) / 2
}

const PORTS = { backend: 4200, old: 4201, new: 4202, oldMetrics: 4211, newMetrics: 4212, oldRedis: 4208, newRedis: 4209 }
const TREES = { old: beforeDir, new: afterDir }

/** Gateway pinned to CPU 0, stdout through a pipe to `cat > file` pinned to CPU 1 (as run.mjs). */
async function startGateway(which, run) {
  const [cbin, cargv] = pin(1, 'cat', [])
  const collector = spawn(cbin, cargv, { stdio: ['pipe', openSync(`${OUT}${which}-run${run}.log`, 'w'), 'ignore'] })
  children.push(collector)
  const env = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: String(PORTS[which]),
    APP_SESSION_SECRET: SECRET,
    APP_AUTH_BASE_URL: iam.url,
    APP_API_PROXY_TARGET: `http://127.0.0.1:${PORTS.backend}`,
    APP_ACCESS_LOG: 'true',
    APP_METRICS_HOST: '127.0.0.1',
    APP_METRICS_PORT: String(PORTS[`${which}Metrics`]),
    APP_REDIS_URL: `redis://127.0.0.1:${PORTS[`${which}Redis`]}`,
  }
  const [bin, argv] = pin(0, process.execPath, ['playground/.output/server/index.mjs'])
  const child = spawn(bin, argv, { cwd: TREES[which], env, stdio: ['ignore', collector.stdin, 'pipe'] })
  let errors = ''
  child.stderr.on('data', (c) => {
    errors += c
  })
  children.push(child)
  await waitForHttp(child, which, PORTS[which], () => errors, 30)
  return { child, collector, errors: () => errors }
}

async function loginCookie(port) {
  const r = await fetch(`http://127.0.0.1:${port}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'admin123' }) })
  if (r.status !== 200) throw new Error(`login on ${port}: ${r.status}`)
  return r.headers.getSetCookie().map(l => l.split(';')[0]).join('; ')
}

/** wrk -t1 -c32 -dNs --latency on CPU 1; bounded by wrk's own duration plus a kill timer. */
function load(url, cookie) {
  const [bin, argv] = pin(1, 'wrk', ['-t1', '-c32', `-d${SECONDS}s`, '--latency', '-H', `cookie: ${cookie}`, url])
  return new Promise((resolve, reject) => {
    const child = spawn(bin, argv, { stdio: ['ignore', 'pipe', 'ignore'] })
    const timer = setTimeout(() => child.kill('SIGKILL'), (SECONDS + 20) * 1000)
    let out = ''
    child.stdout.on('data', (c) => {
      out += c
    })
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      if (code !== 0) return reject(new Error(`wrk on ${url} exit ${code}`))
      resolve({
        rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0),
        p50: wrkMs(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? '0ms'),
        p99: wrkMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? '0ms'),
        non2xx: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0),
        errors: /Socket errors:.*/.exec(out)?.[0] ?? '',
      })
    })
  })
}

let iam
const summary = []
try {
  // Backend on CPU 1 (this repository's bench/backend.mjs, the same for both builds).
  const [bbin, bargv] = pin(1, process.execPath, [fileURLToPath(new URL('./backend.mjs', import.meta.url)), String(PORTS.backend)])
  children.push(spawn(bbin, bargv, { stdio: 'ignore' }))
  await waitForTcp(PORTS.backend)
  iam = await startDevIam({ port: 0 })
  // One redis-server per gateway on CPU 1, each holding 10,000 live session revocations (as run.mjs loads them).
  for (const which of ['old', 'new']) {
    const port = PORTS[`${which}Redis`]
    const [rbin, rargv] = pin(1, 'redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'])
    children.push(spawn(rbin, rargv, { stdio: 'ignore' }))
    await waitForTcp(port)
    const client = new Redis(`redis://127.0.0.1:${port}`)
    const batch = client.pipeline()
    for (let i = 0; i < 10_000; i++) {
      const sid = randomBytes(12).toString('base64url')
      batch.set(`svc:rev:s:${sid}`, JSON.stringify({ kind: 'session', sid, userId: `u-bench-${i}`, iat: Date.now() }), 'PX', 8 * 3_600_000)
    }
    await batch.exec()
    client.disconnect()
  }
  log('backend, dev IAM, 2 redis-servers (10,000 revocations each) up')

  for (let run = 1; run <= RUNS; run++) {
    // Alternate which gateway starts first between runs.
    const order = run % 2 ? ['old', 'new'] : ['new', 'old']
    const gw = {}
    for (const which of order) gw[which] = await startGateway(which, run)
    log(`run ${run}: gateways up (old pid ${gw.old.child.pid}, new pid ${gw.new.child.pid})`)
    // The same cookie bytes for both: log in through the new one, check it opens on both.
    const cookie = await loginCookie(PORTS.new)
    for (const which of ['old', 'new']) {
      const r = await fetch(`http://127.0.0.1:${PORTS[which]}/api/ping`, { headers: { cookie } })
      const body = await r.text()
      if (r.status !== 200) throw new Error(`${which} /api/ping with the cookie: ${r.status} ${body.slice(0, 200)}`)
    }
    log(`run ${run}: cookie ${cookie.length} bytes, /api/ping 200 on both`)
    const url = which => `http://127.0.0.1:${PORTS[which]}/api/ping`
    for (let i = 0; i < WARMUPS; i++) await Promise.all([load(url('old'), cookie), load(url('new'), cookie)])
    log(`run ${run}: warm-up ${WARMUPS}×${SECONDS}s done (both loaded together)`)
    const rounds = []
    for (let round = 0; round < ROUNDS; round++) {
      const first = round % 2 === 0 ? 'old' : 'new'
      const second = first === 'old' ? 'new' : 'old'
      const [a, b] = await Promise.all([load(url(first), cookie), load(url(second), cookie)])
      const res = { [first]: a, [second]: b }
      const r = { round: round + 1, first, old: res.old, new: res.new, ratio: res.new.rps / res.old.rps }
      rounds.push(r)
      log(`run ${run} round ${r.round} (${first} first): old ${r.old.rps.toFixed(0)} req/s p99 ${r.old.p99.toFixed(2)} ms | new ${r.new.rps.toFixed(0)} req/s p99 ${r.new.p99.toFixed(2)} ms | new/old ${r.ratio.toFixed(3)}${r.old.non2xx || r.new.non2xx ? ` non2xx old ${r.old.non2xx} new ${r.new.non2xx}` : ''}${r.old.errors || r.new.errors ? ` [${r.old.errors} | ${r.new.errors}]` : ''}`)
    }
    // Proof of work: metrics request counters.
    const counted = {}
    for (const which of ['old', 'new']) {
      const text = await (await fetch(`http://127.0.0.1:${PORTS[`${which}Metrics`]}/metrics`)).text()
      counted[which] = [...text.matchAll(/^svc_gateway_requests_total\{[^}]*\} (\d+)/gm)].reduce((s, m) => s + Number(m[1]), 0)
    }
    for (const which of ['old', 'new']) await stop(gw[which].child)
    await sleep(500)
    for (const which of ['old', 'new']) await stop(gw[which].collector)
    const access = {}
    for (const which of ['old', 'new']) access[which] = readFileSync(`${OUT}${which}-run${run}.log`, 'utf8').split('\n').filter(l => l.includes('"type":"access"')).length
    const ratios = rounds.map(r => r.ratio)
    const s = {
      run, cookieBytes: cookie.length, ratios, median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios),
      oldRps: median(rounds.map(r => r.old.rps)), newRps: median(rounds.map(r => r.new.rps)),
      oldP99: median(rounds.map(r => r.old.p99)), newP99: median(rounds.map(r => r.new.p99)),
      non2xx: rounds.reduce((x, r) => x + r.old.non2xx + r.new.non2xx, 0), counted, access, rounds,
    }
    summary.push(s)
    log(`run ${run}: median new/old ${s.median.toFixed(3)} (rounds ${s.min.toFixed(3)}–${s.max.toFixed(3)}); median req/s old ${s.oldRps.toFixed(0)} new ${s.newRps.toFixed(0)}; median p99 old ${s.oldP99.toFixed(2)} ms new ${s.newP99.toFixed(2)} ms; non2xx ${s.non2xx}; requests counted ${JSON.stringify(counted)}; access lines ${JSON.stringify(access)}`)
  }
  writeFileSync(`${OUT}summary.json`, JSON.stringify(summary, null, 2))
}
catch (error) {
  console.error('[ab] failed:', error)
  process.exitCode = 1
}
finally {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM')
  await sleep(1_000)
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  await iam?.close?.()
  process.exit(process.exitCode ?? 0)
}
