// @ts-check
/**
 * The soak's load: a steady mix over the gateway instances in rotation (round robin, as a balancer would).
 * - users: log in, then session reads and proxied GETs with a short pause, then log out (every logout is kept for the
 *   end's check that it still holds on every instance);
 * - streamers: uploads and downloads of several MiB, checked byte for byte (SHA-256); while `mode.abortUploads`
 *   they cut their uploads half-way, while `mode.slowReaders` they read downloads at 1 MiB/s;
 * - tunnellers: a WebSocket tunnel echoing random messages for 10 s, then a logout, again.
 * Every exchange carries its own X-Request-Id and ends as one outcome (see Outcome) with its times from the run's start.
 */
import { USERS } from '../dev/iam.mjs'
import { patternSha256 } from '../dev/pattern.mjs'
import { exchange, keepAliveAgent, tunnel } from './client.mjs'

const MiB = 1024 * 1024
/** Stream sizes: several MiB, some not a whole number of blocks. */
const SIZES = [2 * MiB, 3 * MiB + 12_345, 5 * MiB + 1, 6 * MiB]
const EXPECTED = new Map(SIZES.map(size => [size, patternSha256(size)]))
/**
 * The accounts the load logs in as, one after another: the development IAM's viewer, many times over. Many, so that
 * no user reaches the hundred logouts past which the gateway folds a user's revoked sessions into one revocation of
 * all their older sessions (server/core/session/revocations.ts): that would end the live sessions of the same user too.
 */
export const SOAK_ACCOUNTS = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`soak-${i + 1}`, { ...USERS.viewer, password: 'soak123' }]))
const ACCOUNT_NAMES = Object.keys(SOAK_ACCOUNTS)
const sleep = (/** @type {number} */ ms) => new Promise(resolve => setTimeout(resolve, ms))

/**
 * @typedef {object} Outcome one exchange of the load, as its client saw it
 * @property {string} op login, session, get, upload, download, logout, tunnel
 * @property {string} instance the gateway instance it went to
 * @property {string} id its X-Request-Id
 * @property {number} start ms from the run's start
 * @property {number} end
 * @property {number} [status]
 * @property {string} [error] why it is not what was expected: a network error, 'premature-close', 'user-null', 'status', ...
 * @property {boolean} ok what was expected (a cut the client made itself is expected)
 * @property {boolean} reached the gateway got it (an answer came, or body bytes went out on a connection): it owes an
 *   access line
 * @property {{ bytes: number, match: boolean }} [stream] a stream that completed: its length and whether its bytes matched
 * @property {number} [reusedAfterMs] an exchange that got no answer, sent on a kept-alive connection idle this long (a reset
 *   at about the server's keep-alive time is the keep-alive race, a client's fault)
 * @property {string} [note] 'client-abort', 'slow-reader'
 * @property {boolean} [warmUp] an exchange of the warm-up's burst
 */

/**
 * @param {{ instances: { name: string, url: string }[], origin: number, mode: { abortUploads: boolean, slowReaders: boolean },
 *   users?: number, streamers?: number, tunnellers?: number }} options `origin`: the run's start (Date.now())
 */
export function startLoad({ instances, origin, mode, users = 8, streamers = 2, tunnellers = 3 }) {
  /** @type {Outcome[]} */
  const outcomes = []
  /** Logouts that succeeded: the cookie, where and when. */
  const logouts = /** @type {{ cookie: string, instance: string, at: number }[]} */ ([])
  /** Instances a new exchange may go to (one is taken out before it is stopped). */
  const rotation = new Set(instances.map(instance => instance.name))
  const agents = new Map(instances.map(instance => [instance.name, keepAliveAgent()]))
  const urls = new Map(instances.map(instance => [instance.name, instance.url]))
  let running = true
  let sequence = 0
  let turn = 0
  let logins = 0
  const now = () => Date.now() - origin

  const pick = () => {
    const names = [...rotation]
    return names[turn++ % names.length] ?? instances[0].name
  }

  /**
   * One HTTP exchange on the next instance in rotation, judged by `judge` (returns the error, or undefined when as
   * expected), recorded as an outcome.
   * @param {string} op
   * @param {Omit<Parameters<typeof exchange>[0], 'url' | 'agent'> & { path: string }} request
   * @param {(result: import('./client.mjs').Exchange) => { error?: string, stream?: Outcome['stream'], note?: string }} judge
   * @param {{ instance?: string, warmUp?: boolean }} [options] this instance instead of the next in rotation; an exchange
   *   of the warm-up (left out of the plot's throughput)
   */
  async function run(op, request, judge, { instance = pick(), warmUp } = {}) {
    const id = `soak-${++sequence}`
    const start = now()
    const result = await exchange({ ...request, url: urls.get(instance) + request.path, agent: /** @type {import('node:http').Agent} */ (agents.get(instance)), headers: { ...request.headers, 'x-request-id': id } })
    const verdict = result.error === 'client-abort' ? { note: 'client-abort' } : result.error ? { error: result.error } : judge(result)
    /** @type {Outcome} */
    const outcome = { op, instance, id, start, end: now(), status: result.status, ok: !verdict.error, reached: result.status !== undefined || (result.connected && result.sent > 0), ...verdict, ...(verdict.error && result.status === undefined && result.reusedAfterMs !== undefined ? { reusedAfterMs: result.reusedAfterMs } : {}), ...(warmUp ? { warmUp } : {}) }
    outcomes.push(outcome)
    return { outcome, result }
  }

  const statusIs = (/** @type {number} */ expected) => (/** @type {import('./client.mjs').Exchange} */ r) => (r.status === expected ? {} : { error: 'status' })

  /** Logs in as the next account; the Cookie header to send, or undefined. */
  async function logIn(warmUp = false) {
    const username = ACCOUNT_NAMES[logins++ % ACCOUNT_NAMES.length]
    const password = SOAK_ACCOUNTS[username].password
    const { outcome, result } = await run('login', {
      path: '/auth/login',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify({ username, password })),
    }, r => (r.status === 200 && String(r.headers?.['set-cookie']).includes('svc_session=') ? {} : { error: 'status' }), { warmUp })
    if (!outcome.ok) return undefined
    return [result.headers?.['set-cookie'] ?? []].flat().map(line => line.split(';')[0]).join('; ')
  }

  async function logOut(/** @type {string} */ cookie) {
    const { outcome } = await run('logout', { path: '/auth/logout', headers: { cookie } }, statusIs(302))
    if (outcome.ok) logouts.push({ cookie, instance: outcome.instance, at: outcome.end })
  }

  async function user() {
    while (running) {
      const cookie = await logIn()
      if (!cookie) {
        await sleep(500)
        continue
      }
      for (let step = 0; step < 8 && running; step++) {
        if (step % 2 === 0) {
          await run('session', { path: '/auth/session', headers: { cookie, accept: 'application/json' } }, (r) => {
            if (r.status !== 200) return { error: 'status' }
            return JSON.parse(String(r.body)).user ? {} : { error: 'user-null' }
          })
        }
        else await run('get', { path: '/api/items', headers: { cookie } }, statusIs(200))
        await sleep(100)
      }
      await logOut(cookie)
    }
  }

  async function streamer() {
    let cookie
    for (let round = 0; running; round++) {
      cookie ??= await logIn()
      if (!cookie) {
        await sleep(1000)
        continue
      }
      const size = SIZES[round % SIZES.length]
      const expected = { bytes: size, sha256: EXPECTED.get(size) }
      const compare = (/** @type {{ bytes: number, sha256: string } | undefined} */ got) => {
        const match = got?.bytes === expected.bytes && got?.sha256 === expected.sha256
        return { stream: { bytes: got?.bytes ?? 0, match }, ...(match ? {} : { error: 'checksum' }) }
      }
      if (round % 2 === 0) {
        await run('upload', {
          path: '/api/upload',
          method: 'PUT',
          headers: { cookie, 'content-type': 'application/octet-stream' },
          upload: size,
          abortAfter: mode.abortUploads ? Math.floor(size / 2) : undefined,
        }, r => (r.status === 200 ? compare(JSON.parse(String(r.body))) : { error: 'status' }))
      }
      else {
        const slow = mode.slowReaders
        await run('download', {
          path: `/api/download?bytes=${size}`,
          headers: { cookie },
          hash: true,
          readBytesPerSecond: slow ? MiB : undefined,
        }, r => (r.status === 200 ? { ...compare(r.received), ...(slow ? { note: 'slow-reader' } : {}) } : { error: 'status' }))
      }
      if (round % 20 === 19) {
        await logOut(cookie)
        cookie = undefined
      }
      await sleep(300)
    }
  }

  async function tunneller() {
    while (running) {
      const cookie = await logIn()
      if (!cookie) {
        await sleep(1000)
        continue
      }
      const instance = pick()
      const id = `soak-${++sequence}`
      const start = now()
      const url = urls.get(instance)?.replace(/^http/, 'ws') + '/api/echo'
      const result = await tunnel({ url, headers: { cookie, 'x-request-id': id }, seconds: 10 })
      const stream = result.status === 101 && !result.error ? { bytes: result.echoed, match: result.echoed === result.sent } : undefined
      outcomes.push({ op: 'tunnel', instance, id, start, end: now(), status: result.status, ok: !result.error, reached: result.status !== undefined, ...(result.error ? { error: result.error } : {}), ...(stream ? { stream } : {}) })
      await logOut(cookie)
    }
  }

  const workers = [
    ...Array.from({ length: users }, user),
    ...Array.from({ length: streamers }, streamer),
    ...Array.from({ length: tunnellers }, tunneller),
  ]

  /**
   * Warm-up: `count` sessions logged in and opened once on every instance (a proxied GET each, `parallel` at a time),
   * so that each gateway's bounded session cache (server/core/session/session-cache.ts) is full before minute 2, as it stays:
   * filling it later would look like growth. They are not logged out.
   */
  async function prime(/** @type {number} */ count, parallel = 8) {
    let left = count
    const next = async () => {
      while (left-- > 0) {
        const cookie = await logIn(true)
        if (!cookie) continue
        for (const { name } of instances) await run('get', { path: '/api/items', headers: { cookie } }, statusIs(200), { instance: name, warmUp: true })
      }
    }
    await Promise.all(Array.from({ length: parallel }, next))
  }

  /**
   * After the load: every logout of the run, checked on every instance (GET /auth/session and GET /api/items with
   * the logged-out cookie), `parallel` at a time. These exchanges are outcomes too (they owe access lines).
   */
  async function verifyLogouts(parallel = 8) {
    const checks = logouts.flatMap(logout => instances.map(instance => ({ logout, instance: instance.name })))
    const results = []
    const next = async () => {
      for (let check = checks.shift(); check; check = checks.shift()) {
        const { logout, instance } = check
        const session = await run('revoked-session', { path: '/auth/session', headers: { cookie: logout.cookie, accept: 'application/json' } }, () => ({}), { instance })
        const user = session.result.status === 200 ? JSON.parse(String(session.result.body)).user : 'no answer'
        const api = await run('revoked-get', { path: '/api/items', headers: { cookie: logout.cookie } }, () => ({}), { instance })
        results.push({ logout, instance, user, apiStatus: api.result.status })
      }
    }
    await Promise.all(Array.from({ length: parallel }, next))
    return results
  }

  return {
    outcomes,
    logouts,
    rotation,
    /** Stops starting new exchanges and waits for those under way. */
    stop: async () => {
      running = false
      await Promise.all(workers)
    },
    prime,
    verifyLogouts,
    close: () => {
      for (const agent of agents.values()) agent.destroy()
    },
  }
}
