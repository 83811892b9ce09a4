// @ts-check
/**
 * `npm run bench:ab -- <before> <after>`: the /api/** proxy of two builds of the gateway, head to head in one run (a
 * change measured against the build before it). Each folder is a checkout with its playground built (`npm ci && npx
 * nuxt build playground` there; `git worktree add` makes one for an older commit). Both run "as shipped" (access
 * log, metrics listener, Redis revocations with 10,000 held), as `npm run bench` runs it: gateways on CPU 0 (taskset),
 * wrk, the backend, the redis-servers and the log collectors on CPU 1, stdout piped to `cat > file`, a tiny GET
 * /api/ping carrying the ~3.5 KB session cookie of a development-IAM login. Warm-up rounds, then rounds in which both
 * are loaded at once (the machine's mood hits both alike); RUNS fresh pairs of processes. Prints each round's
 * after/before ratio and each run's median. Then the memory phase: MEMORY_ROUNDS rounds, each starting a fresh gateway
 * of each side in turn (alternating which first), as shipped as above, running 64 uploads and 64 downloads of 32 MiB
 * at once through /api/** (a quarter of the readers slow, every transfer's size and SHA-256 checked, as the bench's
 * memory scenario) and taking its peak resident growth (VmHWM − VmRSS after a 1 MiB warm-up each way); prints each
 * round's after/before ratio and their median. Writes bench/.tmp/ab/summary.json. Exits non-zero when a byte is wrong.
 * Loopback only; every load is bounded.
 * RUNS (2), ROUNDS (8), SECONDS_PER_RUN (5), WARMUPS (3), MEMORY_ROUNDS (2; 0 skips the memory phase).
 * AB_BEFORE_ENV, AB_AFTER_ENV (none): space-separated NAME=value pairs added to that side's gateway environment (over
 * the bench's own settings), so one build can be measured against itself with a setting on one side:
 * `AB_AFTER_ENV=APP_KEEP_TICK_SHAPE=true npm run bench:ab -- /tmp/ab /tmp/ab`. Values cannot hold spaces.
 * AB_IDLE_SECONDS (0): both gateways sit idle this long before each measured round (the first one after the warm-up
 * too), so that V8's memory reducer runs its full collections in them (bench/RESULTS.md, 2026-11-22 15:40 UTC:
 * identical processes differ by up to 17%); the reducer waits about 8 s of quiet before it starts, so values under ~10
 * do little.
 * Needs wrk (Debian package) and redis-server.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { startDevIam } from '../dev/iam.mjs'
import { freePort, pin, startRevocationRedis, stop, streamMemory, waitForHttp, waitForTcp, wrkMs } from './processes.mjs'

const RUNS = Number(process.env.RUNS ?? 2)
const ROUNDS = Number(process.env.ROUNDS ?? 8)
const SECONDS = Number(process.env.SECONDS_PER_RUN ?? 5)
const WARMUPS = Number(process.env.WARMUPS ?? 3)
const MEMORY_ROUNDS = Number(process.env.MEMORY_ROUNDS ?? 2)
const IDLE_SECONDS = Number(process.env.AB_IDLE_SECONDS ?? 0)
/** 'NAME=value NAME=value' into { NAME: 'value' }; exits on a word that is not NAME=value. */
function envPairs(knob) {
  const pairs = {}
  for (const word of (process.env[knob] ?? '').split(/\s+/).filter(Boolean)) {
    const match = /^([A-Za-z_]\w*)=(.*)$/.exec(word)
    if (!match) {
      console.error(`${knob}: '${word}' is not NAME=value (space-separated pairs)`)
      process.exit(2)
    }
    pairs[match[1]] = match[2]
  }
  return pairs
}
/** Each side's extra gateway environment: old = before (AB_BEFORE_ENV), new = after (AB_AFTER_ENV). */
const EXTRA_ENV = { old: envPairs('AB_BEFORE_ENV'), new: envPairs('AB_AFTER_ENV') }
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

/** @type {Record<string, number>} Every port from the OS (freePort), taken once at start. */
const PORTS = {}
for (const name of ['backend', 'old', 'new', 'oldMetrics', 'newMetrics']) PORTS[name] = await freePort()
/** @type {Record<string, string>} Each side's Redis (`redis://…`), started below. */
const REDIS = {}
const TREES = { old: beforeDir, new: afterDir }

/**
 * Gateway pinned to CPU 0 with its side's extra environment, stdout through a pipe to `cat > file` pinned to CPU 1 (as
 * bench/setup.mjs); `name` names the log file (`run1`, `memory1`).
 */
async function startGateway(which, name) {
  const [cbin, cargv] = pin(1, 'cat', [])
  const collector = spawn(cbin, cargv, { stdio: ['pipe', openSync(`${OUT}${which}-${name}.log`, 'w'), 'ignore'] })
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
    APP_REDIS_URL: REDIS[which],
    // The memory phase's 64 uploads stand for 64 clients but come from one address (a build before the cap ignores it).
    APP_API_UPLOADS_PER_CLIENT: '0',
    ...EXTRA_ENV[which],
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
/** How an extra environment reads in the log. */
const shown = pairs => Object.entries(pairs).map(([name, value]) => `${name}=${value}`).join(' ') || 'none'
try {
  log(`before ${beforeDir} (extra env: ${shown(EXTRA_ENV.old)}); after ${afterDir} (extra env: ${shown(EXTRA_ENV.new)})`)
  log(`${RUNS} runs × ${WARMUPS} warm-ups + ${ROUNDS} rounds of ${SECONDS} s; idle ${IDLE_SECONDS} s before each round; ${MEMORY_ROUNDS} memory rounds`)
  // Backend on CPU 1 (this repository's bench/backend.mjs, the same for both builds).
  const [bbin, bargv] = pin(1, process.execPath, [fileURLToPath(new URL('./backend.mjs', import.meta.url)), String(PORTS.backend)])
  children.push(spawn(bbin, bargv, { stdio: 'ignore' }))
  await waitForTcp(PORTS.backend)
  iam = await startDevIam({ port: 0 })
  // One redis-server per gateway on CPU 1, each holding 10,000 live session revocations (as the bench loads them).
  for (const which of ['old', 'new']) REDIS[which] = await startRevocationRedis(children)
  log('backend, dev IAM, 2 redis-servers (10,000 revocations each) up')

  for (let run = 1; run <= RUNS; run++) {
    // Alternate which gateway starts first between runs.
    const order = run % 2 ? ['old', 'new'] : ['new', 'old']
    const gw = {}
    for (const which of order) gw[which] = await startGateway(which, `run${run}`)
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
      // Both idle at once: nothing reaches them (wrk has closed its connections), V8's memory reducer may run.
      if (IDLE_SECONDS > 0) await sleep(IDLE_SECONDS * 1000)
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

  // Memory per stream: a fresh gateway of each side in turn (never both at once), alternating which goes first.
  const memory = []
  let broken = 0
  for (let round = 1; round <= MEMORY_ROUNDS; round++) {
    const order = round % 2 ? ['old', 'new'] : ['new', 'old']
    const res = {}
    for (const which of order) {
      const gw = await startGateway(which, `memory${round}`)
      res[which] = await streamMemory(gw.child, PORTS[which], await loginCookie(PORTS[which]), 64)
      await stop(gw.child)
      await stop(gw.collector)
      if (!res[which].intact) {
        broken += res[which].broken
        console.error(`[ab] !!! memory round ${round}: ${res[which].broken} of 128 transfers through ${which} arrived WRONG (size or SHA-256) !!!`)
      }
    }
    const r = { round, first: order[0], old: res.old, new: res.new, ratio: res.new.growth / res.old.growth }
    memory.push(r)
    log(`memory round ${round} (${r.first} first): 128 streams of 32 MiB: growth old ${r.old.growth.toFixed(1)} MiB (from ${r.old.before.toFixed(1)}) | new ${r.new.growth.toFixed(1)} MiB (from ${r.new.before.toFixed(1)}) | new/old ${r.ratio.toFixed(3)}`)
  }
  const memoryMedian = memory.length ? median(memory.map(r => r.ratio)) : null
  if (memory.length) log(`memory: median new/old growth ${memoryMedian?.toFixed(3)} over ${memory.length} rounds; every byte ${broken ? `NOT intact (${broken} transfers wrong)` : 'intact'}`)
  writeFileSync(`${OUT}summary.json`, JSON.stringify({
    before: { dir: beforeDir, env: EXTRA_ENV.old }, after: { dir: afterDir, env: EXTRA_ENV.new }, idleSeconds: IDLE_SECONDS,
    runs: summary, memory: { rounds: memory, median: memoryMedian, broken },
  }, null, 2))
  if (broken) {
    console.error(`[ab] FAILED: ${broken} transfers of the memory phase arrived with wrong bytes`)
    process.exitCode = 1
  }
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
