// @ts-check
/**
 * `node bench/limiter-candidates.mjs`: can rate-limiter-flexible (RLF) replace the gateway's login limits
 * (server/core/limits/rate-limit.ts MemoryRateLimitStore, server/stores/redis-rate-limit.ts RedisRateLimitStore)? Measures the
 * five guarantees the tests define, for RLF used the documented ways and for our stores, and prints one table.
 *
 * G1 memory bound under a flood of distinct keys   G2 blocking counters survive the flood
 * G3 reserve-before-call, all or none (no key for a refused attempt, no slipping past in parallel)
 * G4 Redis down: fallback at once, logged at most once a minute; Redis slow: fallback within ~0.5 s
 * G5 Retry-After = time left of the longest blocking window
 *
 * RLF is driven the three ways a gateway would write it:
 *  - "reserve": consume both keys before the IAM call (what RateLimiterUnion does: Promise.all of consumes), reward
 *    both when the IAM did not refuse, delete the user key on success: our flow, on RLF's API.
 *  - "reserve+undo": the same with a thin wrapper that rewards every key again when one of them refused.
 *  - "login example": the wiki's "Login endpoint protection" (get() both keys, refuse when consumedPoints > points,
 *    consume both only after a failed login, delete the user key after a successful one).
 *
 * Starts its own redis-server processes (free loopback ports, no persistence) and stops them. Our stores are bundled
 * with esbuild from the repo (stdin, as bench/run.mjs does for seal.ts), ioredis with them: both sides use the
 * repo's ioredis. Env: LIMITER_REPO_ROOT (default: the parent of bench/, else the cwd), LIMITER_FLOOD_KEYS (1000000),
 * LIMITER_MAX_KEYS (100000), LIMITER_DOWN_CAP_MS (12000: longest wait measured for one call while Redis is down).
 * Needs `rate-limiter-flexible` (devDependency) and redis-server on PATH. Takes ~35 s, most of it our store's flood (in a child process).
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const here = fileURLToPath(import.meta.url)
const root = resolve(process.env.LIMITER_REPO_ROOT ?? (basename(dirname(here)) === 'bench' ? dirname(dirname(here)) : process.cwd()))
const FLOOD = Number(process.env.LIMITER_FLOOD_KEYS ?? 1_000_000)
const MAX_KEYS = Number(process.env.LIMITER_MAX_KEYS ?? 100_000)
const DOWN_CAP_MS = Number(process.env.LIMITER_DOWN_CAP_MS ?? 12_000)
const WINDOW_S = 900
const SLEEP_S = 5
const BUDGET_MS = 500
const MiB = 1024 * 1024
const sleep = ms => new Promise(done => setTimeout(done, ms))

/** A package from beside this script, else from the repo root. */
function requireFrom(name) {
  for (const base of [here, join(root, 'package.json')]) {
    try {
      return createRequire(base)(name)
    }
    catch {
      // Not found from there: try the next base.
    }
  }
  throw new Error(`${name} is not installed (npm i -D ${name})`)
}

// ---------------------------------------------------------------------------------------------------- flood child
/**
 * One flood in a fresh process (--expose-gc): `FLOOD` distinct keys of limitKey's size, one consume each within one
 * window, after a key was driven to blocking. Prints JSON. Timers are counted by wrapping setTimeout/clearTimeout
 * (creation minus clearing: none can fire within the 900 s window).
 */
async function floodChild(kind) {
  let created = 0
  let cleared = 0
  const realSet = globalThis.setTimeout
  const realClear = globalThis.clearTimeout
  // @ts-ignore
  globalThis.setTimeout = (...args) => (created++, realSet(...args))
  // @ts-ignore
  globalThis.clearTimeout = (handle) => {
    if (handle) cleared++
    return realClear(handle)
  }
  const key = i => `svc:rl:u:${i.toString(36).padStart(22, '0')}` // 31 characters, as limitKey's
  const blocked = `svc:rl:u:${'b'.repeat(22)}`
  let consume, size
  if (kind === 'rlf') {
    const { RateLimiterMemory } = requireFrom('rate-limiter-flexible')
    const limiter = new RateLimiterMemory({ keyPrefix: '', points: 5, duration: WINDOW_S })
    consume = k => limiter.consume(k).then(() => true, () => false)
    size = () => limiter._memoryStorage._storage.size // private; dump() would copy a million entries
  }
  else {
    const { MemoryRateLimitStore } = await import(pathToFileURL(process.env.LIMITER_BUNDLE ?? '').href)
    const store = new MemoryRateLimitStore(MAX_KEYS)
    consume = k => store.reserve([{ key: k, limit: 5 }], WINDOW_S * 1000).then(r => r.ok)
    size = () => store.size
  }
  for (let i = 0; i < 5; i++) await consume(blocked)
  const blockingBefore = !(await consume(blocked))
  globalThis.gc?.()
  const before = process.memoryUsage()
  const timersBefore = created - cleared
  const started = performance.now()
  let peak = 0
  for (let i = 0; i < FLOOD; i++) {
    await consume(key(i))
    if ((i & 1023) === 0) peak = Math.max(peak, size())
  }
  const floodMs = performance.now() - started
  peak = Math.max(peak, size())
  globalThis.gc?.()
  const after = process.memoryUsage()
  const result = {
    keys: size(), peak, floodMs,
    heapMiB: (after.heapUsed - before.heapUsed) / MiB, rssMiB: (after.rss - before.rss) / MiB,
    timers: created - cleared - timersBefore,
    blockingBefore, blockingAfter: !(await consume(blocked)), honestAfter: await consume('svc:rl:u:honest-user-after-the-flood'),
  }
  process.stdout.write(JSON.stringify(result))
  process.exit(0)
}

if (process.env.LIMITER_CHILD) await floodChild(process.env.LIMITER_CHILD)

// ---------------------------------------------------------------------------------------------------- main process
const children = new Set()
const tmp = mkdtempSync(join(tmpdir(), 'limiter-candidates-'))
const bundle = join(tmp, 'ours.mjs')
function cleanUp() {
  for (const child of children) child.kill('SIGKILL')
  rmSync(tmp, { recursive: true, force: true })
}
process.on('exit', cleanUp)
process.on('SIGINT', () => process.exit(130))

const { build } = createRequire(join(root, 'package.json'))('esbuild')
await build({
  stdin: {
    contents: [
      'export { MemoryRateLimitStore, limitKey, retryAfterSeconds } from "./server/core/rate-limit"',
      'export { RedisRateLimitStore } from "./server/stores/redis-rate-limit"',
      'export { connectRedis } from "./server/stores/redis"',
      'export { setLogger } from "./server/ops/logger"',
      'export { Redis } from "ioredis"',
    ].join('\n'),
    resolveDir: root, loader: 'ts',
  },
  bundle: true, platform: 'node', format: 'esm', outfile: bundle, logLevel: 'silent',
  // pino and others require() node's modules: give the ES module a require.
  banner: { js: 'import { createRequire as __limiterRequire } from "node:module"; const require = __limiterRequire(import.meta.url);' },
})
/** @type {any} */
const ours = await import(pathToFileURL(bundle).href)
const { Redis, MemoryRateLimitStore, RedisRateLimitStore, connectRedis, limitKey, setLogger } = ours
const rlf = requireFrom('rate-limiter-flexible')
const { RateLimiterMemory, RateLimiterRedis, RLWrapperTimeouts } = rlf
const rlfVersion = requireFrom('rate-limiter-flexible/package.json').version
const ioredisVersion = createRequire(join(root, 'package.json'))('ioredis/package.json').version
const redisVersion = execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).match(/v=(\d+)\.(\d+)\.(\d+)/)
if (!redisVersion) throw new Error('redis-server --version says no version')

/** Our logger's warnings, counted (RedisRateLimitStore warns through useLogger()). */
const warnings = []
const quiet = () => {}
setLogger(/** @type {any} */ ({ warn: message => warnings.push(String(message)), info: quiet, error: quiet, debug: quiet, trace: quiet, fatal: quiet, child() {
  return this
} }))
/** ioredis prints "[ioredis] Unhandled error event" on console.error for a client without an 'error' listener. */
const unhandled = []
const realConsoleError = console.error
console.error = (...args) => {
  if (String(args[0]).startsWith('[ioredis] Unhandled error event')) unhandled.push(Date.now())
  else realConsoleError(...args)
}

function freePort() {
  return new Promise((done, fail) => {
    const server = createServer()
    server.on('error', fail)
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
      server.close(() => done(port))
    })
  })
}

async function startRedis() {
  const port = await freePort()
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
  if (Number(redisVersion?.[1]) >= 7) args.push('--enable-debug-command', 'local')
  const child = spawn('redis-server', args, { stdio: 'ignore' })
  children.add(child)
  for (let i = 0; ; i++) {
    const up = await new Promise((done) => {
      const socket = connect(port, '127.0.0.1', () => done(socket.end() && true)).on('error', () => done(false))
    })
    if (up) break
    if (i > 100) throw new Error(`redis-server did not start on port ${port}`)
    await sleep(50)
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    stop() {
      child.kill('SIGKILL')
      children.delete(child)
    },
  }
}

/** An ioredis client, ready (or rejected); no 'error' listener, as in RLF's examples, unless ours adds one. */
async function client(url, options = {}) {
  const redis = new Redis(url, options)
  if (redis.status !== 'ready') await new Promise((done, fail) => {
    redis.once('ready', done)
    setTimeout(() => fail(new Error(`Redis at ${url} not ready`)), 5_000).unref()
  })
  return redis
}

// ---------------------------------------------------------------------------------------------------- candidates
/**
 * A candidate as login-limits.ts uses a store: attempt(userKey, ipKey) reserves (or checks) before the IAM call and
 * answers { ok: false, retryAfterMs } or { ok: true, finish(outcome) } with outcome 'refused' (IAM said no), 'other'
 * (5xx, timeout) or 'accepted'. count(key) and keys() read the counters back.
 */
function oursCandidate(name, store, limits, peek) {
  return {
    name,
    async attempt(userKey, ipKey) {
      const result = await store.reserve([{ key: userKey, limit: limits.perUser }, { key: ipKey, limit: limits.perIp }], limits.windowS * 1000)
      if (!result.ok) return result
      return {
        ok: true,
        async finish(outcome) {
          if (outcome === 'refused') return
          await store.release([userKey, ipKey])
          if (outcome === 'accepted') await store.clear(userKey)
        },
      }
    },
    ...peek,
  }
}

function rlfLimiters(limits, redis) {
  const make = (keyPrefix, points) => redis
    ? new RateLimiterRedis({ storeClient: redis, keyPrefix, points, duration: limits.windowS })
    : new RateLimiterMemory({ keyPrefix, points, duration: limits.windowS })
  return { user: make('rlu', limits.perUser), ip: make('rlip', limits.perIp) }
}

/** Consume both before the call (RateLimiterUnion's Promise.all); `undo`: reward every key again when one refused. */
function rlfReserve(name, limits, redis, undo, peek) {
  const { user, ip } = rlfLimiters(limits, redis)
  return {
    name, user, ip,
    async attempt(userKey, ipKey) {
      const settled = await Promise.allSettled([user.consume(userKey), ip.consume(ipKey)])
      const failed = settled.find(s => s.status === 'rejected' && s.reason instanceof Error)
      if (failed) throw /** @type {PromiseRejectedResult} */ (failed).reason
      const refused = settled.filter(s => s.status === 'rejected').map(s => /** @type {PromiseRejectedResult} */ (s).reason)
      if (refused.length) {
        if (undo) await Promise.all([user.reward(userKey), ip.reward(ipKey)])
        return { ok: false, retryAfterMs: Math.max(...refused.map(r => r.msBeforeNext)) }
      }
      return {
        ok: true,
        async finish(outcome) {
          if (outcome === 'refused') return
          await Promise.all([user.reward(userKey), ip.reward(ipKey)])
          if (outcome === 'accepted') await user.delete(userKey)
        },
      }
    },
    ...peek({ user, ip }),
  }
}

/** The wiki's "Login endpoint protection": get() first, consume only after a failed login, delete after success. */
function rlfLoginExample(name, limits, redis, peek) {
  const { user, ip } = rlfLimiters(limits, redis)
  return {
    name, user, ip,
    async attempt(userKey, ipKey) {
      const [byUser, byIp] = await Promise.all([user.get(userKey), ip.get(ipKey)])
      // The example's order: the IP's block answers first.
      if (byIp !== null && byIp.consumedPoints > limits.perIp) return { ok: false, retryAfterMs: byIp.msBeforeNext }
      if (byUser !== null && byUser.consumedPoints > limits.perUser) return { ok: false, retryAfterMs: byUser.msBeforeNext }
      return {
        ok: true,
        async finish(outcome) {
          if (outcome === 'refused') await Promise.allSettled([ip.consume(ipKey), user.consume(userKey)])
          if (outcome === 'accepted' && byUser !== null && byUser.consumedPoints > 0) await user.delete(userKey)
        },
      }
    },
    ...peek({ user, ip }),
  }
}

const rlfMemoryPeek = ({ user, ip }) => ({
  count: async (limiter, key) => (await (limiter === 'user' ? user : ip).get(key))?.consumedPoints ?? 0,
  keys: async () => user.dump().storage.length + ip.dump().storage.length,
})
const rlfRedisPeek = redis => ({ user, ip }) => ({
  count: async (limiter, key) => Number(await redis.get((limiter === 'user' ? user : ip).getKey(key)) ?? 0),
  keys: () => redis.dbsize(),
})

/** The five candidates for one store kind; `redisUrl` set: in Redis, each in its own database (0..4). */
async function candidates(limits, redisUrl) {
  if (!redisUrl) {
    const store = new MemoryRateLimitStore(MAX_KEYS)
    return [
      oursCandidate('ours', store, limits, { count: async (_, key) => store.counters.get(key)?.count ?? 0, keys: async () => store.size }),
      rlfReserve('RLF reserve', limits, undefined, false, rlfMemoryPeek),
      rlfReserve('RLF reserve+undo', limits, undefined, true, rlfMemoryPeek),
      rlfLoginExample('RLF login example', limits, undefined, rlfMemoryPeek),
    ]
  }
  const redis = await Promise.all([0, 1, 2, 3].map(db => client(redisUrl, { enableOfflineQueue: false, db })))
  const oursClient = await connectRedis(`${redisUrl}/0`)
  await new Promise(done => oursClient.status === 'ready' ? done(undefined) : oursClient.once('ready', done))
  const store = new RedisRateLimitStore(oursClient, new MemoryRateLimitStore(MAX_KEYS))
  return [
    oursCandidate('ours', store, limits, { count: async (_, key) => Number(await redis[0].get(key) ?? 0), keys: () => redis[0].dbsize(), clients: [oursClient] }),
    rlfReserve('RLF reserve', limits, redis[1], false, rlfRedisPeek(redis[1])),
    rlfReserve('RLF reserve+undo', limits, redis[2], true, rlfRedisPeek(redis[2])),
    rlfLoginExample('RLF login example', limits, redis[3], rlfRedisPeek(redis[3])),
  ].map((candidate, i) => ({ ...candidate, clients: [...(candidate.clients ?? []), redis[i]] }))
}

/** One login through a candidate: the IAM answers `outcome` after `iamMs`. True when the IAM was called. */
async function login(candidate, user, ip, outcome = 'refused', iamMs = 0) {
  const ticket = await candidate.attempt(limitKey('u', ip, user), limitKey('ip', ip))
  if (!ticket.ok) return false
  if (iamMs) await sleep(iamMs)
  await ticket.finish(outcome)
  return true
}

// ---------------------------------------------------------------------------------------------------- G3, G5
/** G3 and G5 figures for every candidate of one store kind. */
async function reserveFigures(redisUrl) {
  const rows = {}
  const each = async (limits, run) => {
    const list = await candidates(limits, redisUrl)
    try {
      await Promise.all(list.map(async (c) => {
        rows[c.name] = { ...rows[c.name], ...await run(c) }
      }))
    }
    finally {
      for (const c of list) for (const k of c.clients ?? []) k.disconnect()
    }
  }
  // One key at its limit (IP, 1): is the other counted? Does a refused attempt with a fresh username create a key?
  await each({ perUser: 3, perIp: 1, windowS: 60 }, async (c) => {
    const ip = '198.51.100.1'
    await login(c, 'first', ip)
    if (c.name === 'RLF login example') await login(c, 'second', ip) // it refuses only past the limit (> points)
    const keysBefore = await c.keys()
    let refused = 0
    for (let i = 0; i < 20; i++) refused += (await login(c, `fresh-${i}`, ip)) ? 0 : 1
    return {
      refused20: refused,
      otherCounted: await c.count('user', limitKey('u', ip, 'fresh-0')),
      newKeys: (await c.keys()) - keysBefore,
      ipCount: await c.count('ip', limitKey('ip', ip)),
    }
  })
  // Ten parallel attempts of one user against a limit of 3 (IAM refuses after 30 ms); then in sequence.
  await each({ perUser: 3, perIp: 100, windowS: 60 }, async (c) => {
    const ip = '198.51.100.2'
    const calls = (await Promise.all(Array.from({ length: 10 }, () => login(c, 'burst', ip, 'refused', 30)))).filter(Boolean).length
    const parallelIpCount = await c.count('ip', limitKey('ip', ip))
    let sequential = 0
    for (let i = 0; i < 8; i++) sequential += (await login(c, 'steady', '198.51.100.5')) ? 1 : 0
    return { parallelCalls: calls, parallelIpCount, sequentialCalls: sequential }
  })
  // A release (non-refusal) that lands after the window ended: how many IAM calls in the next window?
  await each({ perUser: 3, perIp: 100, windowS: 1 }, async (c) => {
    const ip = '198.51.100.3'
    const key = limitKey('u', ip, 'late')
    const ticket = await c.attempt(key, limitKey('ip', ip))
    await sleep(1_150)
    if (ticket.ok) await ticket.finish('other')
    const afterRelease = await c.count('user', key)
    let calls = 0
    for (let i = 0; i < 8; i++) calls += (await login(c, 'late', ip)) ? 1 : 0
    return { lateReleaseCount: afterRelease, nextWindowCalls: calls }
  })
  // G5: user X fails once (IP window starts), 300 ms later user Y fails until refused (Y's window starts), 200 ms
  // later Y tries again: both blocking; the longest is Y's.
  await each({ perUser: 3, perIp: 4, windowS: 60 }, async (c) => {
    const ip = '198.51.100.4'
    await login(c, 'x', ip)
    await sleep(300)
    const yStart = Date.now()
    for (let i = 0; i < 6 && await login(c, 'y', ip); i++);
    await sleep(200)
    const ticket = await c.attempt(limitKey('u', ip, 'y'), limitKey('ip', ip))
    const longest = 60_000 - (Date.now() - yStart)
    return { retryAfterMs: ticket.ok ? null : ticket.retryAfterMs, longestMs: longest }
  })
  return rows
}

// ---------------------------------------------------------------------------------------------------- G4
function timed(run, capMs) {
  const started = performance.now()
  return Promise.race([
    run().then(() => performance.now() - started, () => performance.now() - started),
    sleep(capMs).then(() => Infinity),
  ])
}

const withInsurance = (redis, extra = {}) => new RateLimiterRedis({
  storeClient: redis, keyPrefix: 'g4', points: 1000, duration: WINDOW_S,
  insuranceLimiter: new RateLimiterMemory({ keyPrefix: 'g4', points: 1000, duration: WINDOW_S }), ...extra,
})

/** Redis killed: time per call (3 in a row), offline queue, log lines; then a flood of fallback keys. */
async function downFigures() {
  const server = await startRedis()
  const variants = {
    'RLF, ioredis defaults': withInsurance(await client(server.url)),
    'RLF, enableOfflineQueue: false (documented)': withInsurance(await client(server.url, { enableOfflineQueue: false })),
    'RLF, rejectIfRedisNotReady': withInsurance(await client(server.url), { rejectIfRedisNotReady: true }),
  }
  const oursClient = await connectRedis(server.url)
  await new Promise(done => oursClient.status === 'ready' ? done(undefined) : oursClient.once('ready', done))
  const oursStore = new RedisRateLimitStore(oursClient, new MemoryRateLimitStore(1_000))
  for (const limiter of Object.values(variants)) await limiter.consume('warm')
  await oursStore.reserve([{ key: 'warm', limit: 1000 }], WINDOW_S * 1000)
  warnings.length = 0
  unhandled.length = 0
  server.stop()
  const downAt = Date.now()
  await sleep(300)
  const rows = {}
  const defaults = variants['RLF, ioredis defaults']
  // 100 calls at once on the default client: where do they wait?
  const queued = Array.from({ length: 100 }, (_, i) => defaults.consume(`queued-${i}`).catch(() => undefined))
  const offlineQueue = defaults.client.offlineQueue?.length
  await Promise.all([
    ...Object.entries(variants).map(async ([name, limiter]) => {
      const ms = []
      // A call past the cap is left waiting; the next ones would wait as long: not measured.
      for (let i = 0; i < 3 && !(ms.at(-1) === Infinity); i++) ms.push(await timed(() => limiter.consume(`down-${i}`), DOWN_CAP_MS))
      rows[name] = { ms, insurance: limiter.insuranceLimiter.dump().storage.length }
    }),
    (async () => {
      const ms = []
      for (let i = 0; i < 3; i++) ms.push(await timed(() => oursStore.reserve([{ key: `down-${i}`, limit: 1000 }], WINDOW_S * 1000), DOWN_CAP_MS))
      rows.ours = { ms }
    })(),
  ])
  await Promise.race([Promise.all(queued), sleep(1_000)])
  const downSeconds = (Date.now() - downAt) / 1000
  // Distinct keys while Redis is down: how many fallback counters are kept?
  const flood = 20_000
  const documented = variants['RLF, enableOfflineQueue: false (documented)']
  for (let i = 0; i < flood; i++) {
    await documented.consume(`fallback-${i}`).catch(() => undefined)
    await oursStore.reserve([{ key: `fallback-${i}`, limit: 5 }], WINDOW_S * 1000)
  }
  const result = {
    rows, offlineQueue, downSeconds, flood,
    unhandledLines: unhandled.length, oursWarnings: warnings.length,
    rlfFallbackKeys: documented.insuranceLimiter.dump().storage.length,
    oursFallbackKeys: oursStore.local.size,
  }
  for (const limiter of Object.values(variants)) limiter.client.disconnect()
  oursClient.disconnect()
  return result
}

/** Redis asleep (DEBUG SLEEP 5): time per call (2 in a row), counts in memory and, once awake, in Redis. */
async function slowFigures() {
  const server = await startRedis()
  const documented = { enableOfflineQueue: false }
  const timeout = { enableOfflineQueue: false, commandTimeout: BUDGET_MS }
  const wrap = limiter => new RLWrapperTimeouts({ limiter, timeoutMs: BUDGET_MS })
  const variants = {
    'RLF, enableOfflineQueue: false (documented)': withInsurance(await client(server.url, documented)),
    'RLF, rejectIfRedisNotReady': withInsurance(await client(server.url, documented), { rejectIfRedisNotReady: true }),
    'RLF, ioredis commandTimeout 500': withInsurance(await client(server.url, timeout)),
    'RLF, RLWrapperTimeouts 500': wrap(withInsurance(await client(server.url, documented))),
    'RLF, RLWrapperTimeouts 500 + commandTimeout 500': wrap(withInsurance(await client(server.url, timeout))),
  }
  const oursClient = await connectRedis(server.url)
  await new Promise(done => oursClient.status === 'ready' ? done(undefined) : oursClient.once('ready', done))
  const oursStore = new RedisRateLimitStore(oursClient, new MemoryRateLimitStore(MAX_KEYS))
  const reader = await client(server.url)
  const blocker = await client(server.url)
  for (const limiter of Object.values(variants)) await limiter.consume('warm')
  warnings.length = 0
  unhandled.length = 0
  const asleep = blocker.call('DEBUG', 'SLEEP', String(SLEEP_S)).catch(error => error)
  await sleep(50)
  const rows = {}
  await Promise.all([
    ...Object.entries(variants).map(async ([name, limiter], i) => {
      const ms = []
      for (let n = 0; n < 2; n++) ms.push(await timed(() => limiter.consume(`slow-${i}`), (SLEEP_S + 5) * 1000))
      rows[name] = { ms, key: limiter.limiter ? limiter.limiter.getKey(`slow-${i}`) : limiter.getKey(`slow-${i}`), insurance: limiter.insuranceLimiter }
    }),
    (async () => {
      const ms = []
      for (let n = 0; n < 2; n++) ms.push(await timed(() => oursStore.reserve([{ key: 'slow-ours', limit: 1000 }], WINDOW_S * 1000), (SLEEP_S + 5) * 1000))
      rows.ours = { ms }
    })(),
  ])
  const debugAnswer = await asleep
  await sleep(200)
  for (const [name, row] of Object.entries(rows)) {
    if (name === 'ours') {
      row.memory = oursStore.local.counters.get('slow-ours')?.count ?? 0
      row.redis = Number(await reader.get('slow-ours') ?? 0)
    }
    else {
      row.memory = (await row.insurance.get(row.key.slice('g4:'.length)))?.consumedPoints ?? 0
      row.redis = Number(await reader.get(row.key) ?? 0)
    }
    delete row.insurance
    delete row.key
  }
  const result = { order: Object.keys(variants), rows, oursWarnings: warnings.length, unhandledLines: unhandled.length, debugAnswer: debugAnswer instanceof Error ? debugAnswer.message : String(debugAnswer) }
  for (const limiter of Object.values(variants)) (limiter.limiter ?? limiter).client.disconnect()
  oursClient.disconnect()
  reader.disconnect()
  blocker.disconnect()
  server.stop()
  return result
}

// ---------------------------------------------------------------------------------------------------- run
function floodRun(kind) {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--expose-gc', here], { env: { ...process.env, LIMITER_CHILD: kind, LIMITER_BUNDLE: bundle }, stdio: ['ignore', 'pipe', 'inherit'] })
    children.add(child)
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
    })
    child.on('exit', (code) => {
      children.delete(child)
      if (code === 0) done(JSON.parse(out))
      else fail(new Error(`flood ${kind} exited with ${code}`))
    })
  })
}

const log = (...args) => realConsoleError('[limiters]', ...args)
log(`rate-limiter-flexible ${rlfVersion}, ioredis ${ioredisVersion} (repo's), redis-server ${redisVersion[0].slice(2)}, node ${process.version}; repo ${root}`)
log(`flooding ${FLOOD.toLocaleString('en')} keys in two child processes while the Redis checks run…`)
const started = Date.now()
// RLF's flood first (a few seconds), ours beside the Redis checks: the 2-core machine is shared.
const floods = (async () => {
  const rlfFlood = await floodRun('rlf')
  return { rlf: rlfFlood, ours: await floodRun('ours') }
})()
const memory = await reserveFigures(undefined)
const redisServer = await startRedis()
const inRedis = await reserveFigures(redisServer.url)
redisServer.stop()
log('Redis down…')
const down = await downFigures()
log(`Redis asleep ${SLEEP_S} s…`)
const slow = await slowFigures()
log('waiting for the floods…')
const flood = await floods

// ---------------------------------------------------------------------------------------------------- table
const n = x => Number.isFinite(x) ? Math.round(x).toLocaleString('en') : `>${DOWN_CAP_MS.toLocaleString('en')}`
const mib = x => `${x.toFixed(0)} MiB`
const verdict = ok => (ok ? '**holds**' : '**fails**')
const F = flood
const fl = f => `${f.keys.toLocaleString('en')} keys kept, heap +${mib(f.heapMiB)}, RSS +${mib(f.rssMiB)}, ${f.timers.toLocaleString('en')} timers pending, ${n(f.floodMs)} ms`
const g3 = (rows, name) => {
  const r = rows[name]
  const ok = r.otherCounted === 0 && r.newKeys === 0 && r.parallelCalls === 3 && r.nextWindowCalls === 3
  return `${verdict(ok)}: refused attempt counted the other key ${r.otherCounted}×; 20 refused fresh usernames made ${r.newKeys} keys (IP key ${r.ipCount}); 10 parallel at limit 3 → ${r.parallelCalls} IAM calls (IP key ${r.parallelIpCount}); sequential → ${r.sequentialCalls} IAM calls; release after window end → count ${r.lateReleaseCount}, next window ${r.nextWindowCalls} IAM calls`
}
const g5 = (rows, name) => {
  const r = rows[name]
  const ok = r.retryAfterMs !== null && Math.abs(r.retryAfterMs - r.longestMs) < 150
  return `${verdict(ok)}: ${r.retryAfterMs === null ? 'not refused' : `${n(r.retryAfterMs)} ms`} (longest window left ${n(r.longestMs)} ms)`
}
const downRow = name => `${down.rows[name].ms.map(n).join(' / ')} ms`
const slowRow = (name) => {
  const r = slow.rows[name]
  return `${r.ms.map(n).join(' / ')} ms; counted memory ${r.memory}, Redis ${r.redis}`
}
const fastDown = name => down.rows[name].ms.every(ms => ms < 100)
const fastSlow = name => slow.rows[name].ms.every(ms => ms < BUDGET_MS + 400)

const lines = [
  `rate-limiter-flexible ${rlfVersion} · ioredis ${ioredisVersion} · redis-server ${redisVersion[0].slice(2)} · ${process.version} · flood ${FLOOD.toLocaleString('en')} keys, window ${WINDOW_S} s, ours maxKeys ${MAX_KEYS.toLocaleString('en')} · ${((Date.now() - started) / 1000).toFixed(0)} s`,
  '',
  '| Guarantee | rate-limiter-flexible | ours |',
  '|---|---|---|',
  `| G1 memory bound, ${FLOOD.toLocaleString('en')} distinct keys | memory: ${verdict(F.rlf.keys <= MAX_KEYS)}: ${fl(F.rlf)}. Redis: insurance limiter is a RateLimiterMemory: ${down.flood.toLocaleString('en')} keys during an outage → ${down.rlfFallbackKeys.toLocaleString('en')} kept (no bound option) | ${verdict(F.ours.peak <= MAX_KEYS)}: ${fl(F.ours)}; peak ${F.ours.peak.toLocaleString('en')}. Redis fallback (maxKeys 1,000): ${down.oursFallbackKeys.toLocaleString('en')} kept |`,
  `| G2 blocking counter survives the flood | ${verdict(F.rlf.blockingBefore && F.rlf.blockingAfter)} (nothing is ever evicted: that is G1's failure); honest key after: ${F.rlf.honestAfter ? 'accepted' : 'refused'} | ${verdict(F.ours.blockingBefore && F.ours.blockingAfter)}; honest key after: ${F.ours.honestAfter ? 'accepted' : 'refused'} |`,
  ...['RLF reserve', 'RLF reserve+undo', 'RLF login example'].flatMap(name => [
    `| G3 all-or-none, memory — ${name} | ${g3(memory, name)} | ${g3(memory, 'ours')} |`,
    `| G3 all-or-none, Redis — ${name} | ${g3(inRedis, name)} | ${g3(inRedis, 'ours')} |`,
  ]),
  `| G4 Redis down: ms per call (3 in a row) | ioredis defaults: ${verdict(fastDown('RLF, ioredis defaults'))} ${downRow('RLF, ioredis defaults')}, offline queue ${down.offlineQueue} after 100 calls; enableOfflineQueue false (documented): ${verdict(fastDown('RLF, enableOfflineQueue: false (documented)'))} ${downRow('RLF, enableOfflineQueue: false (documented)')}; rejectIfRedisNotReady: ${verdict(fastDown('RLF, rejectIfRedisNotReady'))} ${downRow('RLF, rejectIfRedisNotReady')} | ${verdict(fastDown('ours'))} ${downRow('ours')} |`,
  `| G4 Redis down: log lines in ${down.downSeconds.toFixed(0)} s | **fails** (RLF logs nothing; falls back silently): ${down.unhandledLines} "[ioredis] Unhandled error event" lines from the 3 clients without an 'error' listener (as in the docs) | ${verdict(down.oursWarnings === 1)}: ${down.oursWarnings} warning |`,
  ...slow.order.map(name => `| G4 Redis asleep ${SLEEP_S} s — ${name} | ${verdict(fastSlow(name))}: ${slowRow(name)} | ${verdict(fastSlow('ours'))}: ${slowRow('ours')}; ${slow.oursWarnings} warning |`),
  `| G4 Redis asleep ${SLEEP_S} s: log lines | **fails**: ${slow.unhandledLines} lines (a timed-out command is no 'error' event; the insurance limiter takes over silently) | ${verdict(slow.oursWarnings === 1)}: ${slow.oursWarnings} warning |`,
  `| G5 Retry-After = longest window left (memory) | reserve (max over refusals, a wrapper): ${g5(memory, 'RLF reserve')}; login example (IP first): ${g5(memory, 'RLF login example')} | ${g5(memory, 'ours')} |`,
  `| G5 Retry-After (Redis) | reserve: ${g5(inRedis, 'RLF reserve')}; login example: ${g5(inRedis, 'RLF login example')} | ${g5(inRedis, 'ours')} |`,
]
lines.push(
  '',
  'RLF reserve: consume both keys before the IAM call (RateLimiterUnion takes one key for all its limiters, so two consumes), reward both unless the IAM refused, delete the user key on success.',
  'RLF reserve+undo: the same, rewarding every key again when one refused. RLF login example: the wiki\'s "Login endpoint protection" (get() both, refuse when consumedPoints > points, consume after a failure).',
  'Why (rate-limiter-flexible 11.4.0): MemoryStorage.js keeps every key in an unbounded Map with one setTimeout each (set(): _storage.set + setTimeout); consume() increments before it checks (RateLimiterMemory.js incrby then consumedPoints > points; RateLimiterRedis.js Lua: SET NX then INCRBY, one key per script);',
  'reward() on a missing key creates it at -1 (MemoryStorage.incrby -> set; the same Lua); RateLimiterRedis has no timeout of its own (rejectIfRedisNotReady looks only at client.status); the insurance limiter is used without a log line (RateLimiterInsuredAbstract._handleError);',
  'RLWrapperTimeouts shares the wrapped limiter\'s insuranceLimiter, so with commandTimeout as well both fall back: two counts per attempt.',
)
console.log(lines.join('\n'))
if (process.env.LIMITER_JSON) console.log(JSON.stringify({ flood, memory, inRedis, down, slow }, null, 2))
process.exit(0)
