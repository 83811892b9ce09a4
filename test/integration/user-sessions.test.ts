import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { USERS } from '../../dev/iam.mjs'
import { logEntries, type RunningGateway } from '../support/gateway'
import { postLogin, sessionCookieOf } from '../support/login'
import { rawRequest, type RawAnswer } from '../support/raw-http'
import { agedSessionCookie } from '../support/sealed'
import { useStack } from '../support/stack'

// A user's own sessions (issue 41, items 2, 3 and 5): the per-user index on two instances sharing a real redis-server,
// GET /auth/sessions, POST /auth/sessions/end and /end-others, and APP_SESSION_MAX_PER_USER (3 here).
const CHROME_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1'
const NAMES = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'gina'] as const
const accounts: typeof USERS = Object.fromEntries(NAMES.map(name => [name, { password: `${name}123`, fullName: name, email: `${name}@example.vn`, roles: [], authorization: [] }]))

const stack = useStack({ redis: true, iam: { accounts }, env: { APP_SESSION_MAX_PER_USER: '3', APP_SESSION_IDLE_TIMEOUT: '10' } })
let a: RunningGateway
let b: RunningGateway
let redis: Redis
beforeAll(async () => {
  ;[a, b] = await Promise.all([stack.gatewayWith({ APP_REDIS_URL: stack.redis.url }), stack.gatewayWith({ APP_REDIS_URL: stack.redis.url })])
  redis = new Redis(stack.redis.url)
})
afterAll(() => redis?.disconnect())

interface Listed { id: string, createdAt: number, lastSeenAt: number, address: string, device: string, current: boolean }

async function login(at: RunningGateway, name: typeof NAMES[number], userAgent = CHROME_WINDOWS): Promise<string> {
  const answer = await postLogin(at, { username: name, password: `${name}123` }, { 'user-agent': userAgent })
  expect(answer.status).toBe(200)
  return sessionCookieOf(answer)
}
const list = (at: RunningGateway, cookie: string) => rawRequest(`${at.url}/auth/sessions`, { headers: { cookie } })
const sessionsOf = async (at: RunningGateway, cookie: string) => {
  const answer = await list(at, cookie)
  expect(answer.status).toBe(200)
  return (JSON.parse(answer.body) as { sessions: Listed[] }).sessions
}
const post = (at: RunningGateway, path: string, cookie: string, body?: unknown, headers: Record<string, string> = {}) =>
  rawRequest(`${at.url}${path}`, { method: 'POST', headers: { 'cookie': cookie, 'content-type': 'application/json', ...headers }, body: body === undefined ? '' : JSON.stringify(body) })
const userOf = async (at: RunningGateway, cookie: string) =>
  (JSON.parse((await rawRequest(`${at.url}/auth/session`, { headers: { cookie, 'x-session-peek': '1' } })).body) as { user: { id: string } | null }).user
const errorBody = (statusCode: number, message: string) => JSON.stringify({ statusCode, statusMessage: message, message })
const setCookies = (answer: RawAnswer) => (answer.headers['set-cookie'] as string[] | undefined) ?? []

/**
 * Polls until `cookie` is no session on both instances; how long it took from `since`: the moment the end's answer
 * came (the user sees it ended then; the request's own time on a loaded machine is not what "within 1 s" is about).
 */
async function endedEverywhere(cookie: string, since: number): Promise<number> {
  for (const at of [a, b]) await expect.poll(() => userOf(at, cookie), { timeout: 1_000, interval: 50 }).toBeNull()
  return Date.now() - since
}

describe('GET /auth/sessions', () => {
  it('lists the user\'s live sessions from either instance, the current one first and marked', async () => {
    const onA = await login(a, 'alice', CHROME_WINDOWS)
    const onB = await login(b, 'alice', SAFARI_IPHONE)
    await login(a, 'bob')
    for (const [at, cookie, device] of [[a, onA, 'Chrome on Windows'], [b, onB, 'Safari on iPhone']] as const) {
      const answer = await list(at, cookie)
      expect(answer.headers['cache-control']).toBe('no-store')
      const sessions = (JSON.parse(answer.body) as { sessions: Listed[] }).sessions
      expect(sessions.map(session => [session.device, session.current])).toEqual([[device, true], [device === 'Chrome on Windows' ? 'Safari on iPhone' : 'Chrome on Windows', false]])
      for (const session of sessions) {
        expect(session).toMatchObject({ address: '127.0.0.1', id: expect.stringMatching(/^[\w-]{16}\.[\w-]+$/) })
        expect(session.lastSeenAt).toBeGreaterThanOrEqual(session.createdAt)
        expect(Date.now() - session.createdAt).toBeLessThan(60_000)
      }
    }
    expect(JSON.stringify(await sessionsOf(a, onA))).not.toContain('bob')
  })

  it('answers 401 in the contract\'s form without a session, and 405 to another method', async () => {
    const answer = await list(a, '')
    expect(answer.status).toBe(401)
    expect(answer.body).toBe(errorBody(401, 'Chưa đăng nhập hoặc phiên đăng nhập đã hết hạn.'))
    const wrong = await rawRequest(`${a.url}/auth/sessions`, { method: 'DELETE', headers: { 'sec-fetch-site': 'same-origin' } })
    expect([wrong.status, wrong.headers.allow]).toEqual([405, 'GET, HEAD'])
    for (const path of ['/auth/sessions/end', '/auth/sessions/end-others']) {
      expect((await rawRequest(`${a.url}${path}`)).status).toBe(405)
      expect((await post(a, path, '', {})).body).toBe(errorBody(401, 'Chưa đăng nhập hoặc phiên đăng nhập đã hết hạn.'))
    }
  })

  it('lists no session that ended another way (a logout)', async () => {
    const kept = await login(a, 'gina')
    const loggedOut = await login(b, 'gina')
    expect(await sessionsOf(a, kept)).toHaveLength(2)
    expect((await rawRequest(`${b.url}/auth/logout`, { headers: { cookie: loggedOut } })).status).toBe(302)
    await expect.poll(async () => (await sessionsOf(a, kept)).map(session => session.current), { timeout: 1_000, interval: 50 }).toEqual([true])
  })

  it('moves a session\'s last-seen time when the idle timeout re-seals its cookie, not on each request', async () => {
    const cookie = await login(a, 'frank')
    const [before] = await sessionsOf(b, cookie)
    expect(before!.lastSeenAt).toBe(before!.createdAt)
    // Last seen 3 minutes ago: a quarter of the 10-minute window has passed, the next proxied request re-seals it.
    const resealed = await rawRequest(`${b.url}/api/orders`, { headers: { cookie: agedSessionCookie(cookie, { seenAgo: 3 * 60_000 }) } })
    expect(setCookies(resealed).some(line => line.startsWith('svc_session='))).toBe(true)
    await expect.poll(async () => (await sessionsOf(a, cookie))[0]!.lastSeenAt, { timeout: 2_000, interval: 50 }).toBeGreaterThan(before!.createdAt)
  })
})

describe('ending sessions', () => {
  it('ends one session of one\'s own on every instance within 1 s', async () => {
    const mine = await login(a, 'carol')
    const other = await login(b, 'carol', SAFARI_IPHONE)
    const target = (await sessionsOf(a, mine)).find(session => !session.current)!
    const answer = await post(a, '/auth/sessions/end', mine, { id: target.id })
    const started = Date.now()
    expect([answer.status, answer.body]).toEqual([200, JSON.stringify({ current: false })])
    expect(await endedEverywhere(other, started)).toBeLessThan(1_000)
    expect(await userOf(b, mine)).toMatchObject({ id: 'u-carol' })
    // Its audit line (the log is written in the background): who, why, which device, from which client and request;
    // never a cookie or token.
    const line = () => logEntries(a.stdout()).find(entry => entry.event === 'session.end' && entry.userId === 'u-carol')
    await expect.poll(line, { timeout: 5_000, interval: 50 }).toMatchObject({ type: 'audit', reason: 'user', device: 'Safari on iPhone', client: '127.0.0.1', requestId: expect.any(String) })
    expect(JSON.stringify(line())).not.toMatch(/svc_session|v1\./)
    expect((await sessionsOf(b, mine)).map(session => session.current)).toEqual([true])
  })

  it('ends every other session with end-others, on every instance within 1 s', async () => {
    const mine = await login(b, 'dave')
    const others = [await login(a, 'dave'), await login(b, 'dave', SAFARI_IPHONE)]
    const answer = await post(b, '/auth/sessions/end-others', mine)
    const started = Date.now()
    expect([answer.status, answer.body]).toEqual([200, JSON.stringify({ ended: 2 })])
    for (const cookie of others) expect(await endedEverywhere(cookie, started)).toBeLessThan(1_000)
    expect((await sessionsOf(a, mine)).map(session => session.current)).toEqual([true])
  })

  it('ends nothing for a forged or another user\'s id: 404, the other user\'s session intact', async () => {
    const alice = await login(a, 'erin')
    const bob = await login(b, 'bob')
    const bobs = (await sessionsOf(b, bob))[0]!.id
    const [sid] = bobs.split('.')
    const forged = [bobs, `${sid}.${Buffer.from('u-erin').toString('base64url')}`, 'x', `${sid}.`, 42, null, undefined]
    for (const id of forged) {
      const answer = await post(a, '/auth/sessions/end', alice, id === undefined ? {} : { id })
      expect([answer.status, answer.body]).toEqual([404, errorBody(404, 'Không tìm thấy phiên đăng nhập này.')])
    }
    expect(await userOf(a, bob)).toMatchObject({ id: 'u-bob' })
    expect((await sessionsOf(a, bob)).some(session => session.id === bobs)).toBe(true)
    expect((await post(a, '/auth/sessions/end', alice, 'not json', { 'content-type': 'text/plain' })).status).toBe(415)
  })

  it('refuses a cross-origin end with the cross-origin rule\'s 403', async () => {
    const cookie = await login(a, 'erin')
    const id = (await sessionsOf(a, cookie))[0]!.id
    for (const path of ['/auth/sessions/end', '/auth/sessions/end-others']) {
      const answer = await post(a, path, cookie, { id }, { 'origin': 'https://evil.example', 'sec-fetch-site': 'cross-site' })
      expect([answer.status, answer.body]).toEqual([403, errorBody(403, 'Yêu cầu khác nguồn gốc bị từ chối.')])
    }
    expect(await userOf(b, cookie)).toMatchObject({ id: 'u-erin' })
  })

  it('ends the current session as a logout: its cookie cleared, no session anywhere', async () => {
    const cookie = await login(b, 'frank')
    const own = (await sessionsOf(b, cookie)).find(session => session.current)!
    const answer = await post(b, '/auth/sessions/end', cookie, { id: own.id })
    const started = Date.now()
    expect([answer.status, answer.body]).toEqual([200, JSON.stringify({ current: true })])
    expect(setCookies(answer).filter(line => line.startsWith('svc_session='))).toEqual([expect.stringMatching(/^svc_session=; Max-Age=0;/)])
    expect(await endedEverywhere(cookie, started)).toBeLessThan(1_000)
  })
})

describe('APP_SESSION_MAX_PER_USER', () => {
  it('a login past the cap ends the oldest session, on every instance', async () => {
    const logins = [await login(a, 'bob'), await login(b, 'bob'), await login(a, 'bob')]
    const fresh = await login(b, 'bob')
    const listed = await sessionsOf(a, fresh)
    expect(listed).toHaveLength(3)
    // Bob's two earlier sessions of this file ended at the second and third logins here, the first one here at the fourth.
    expect(await endedEverywhere(logins[0]!, Date.now())).toBeLessThan(1_000)
    for (const cookie of [...logins.slice(1), fresh]) expect(await userOf(a, cookie)).toMatchObject({ id: 'u-bob' })
  })
})

describe('the index costs no Redis call per proxied request', () => {
  it('a burst of proxied requests sends Redis no command', async () => {
    const cookie = await login(a, 'alice')
    const calls = async () => {
      const stats = await redis.info('commandstats')
      return [...stats.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)].filter(([, name]) => name !== 'info').reduce((sum, [, , count]) => sum + Number(count), 0)
    }
    const proxiedBefore = stack.echo.received.length
    const before = await calls()
    for (let round = 0; round < 10; round++) {
      await Promise.all([a, b].flatMap(at => Array.from({ length: 5 }, () => rawRequest(`${at.url}/api/orders`, { headers: { cookie } }))))
    }
    expect(stack.echo.received.length - proxiedBefore).toBe(100)
    expect(await calls()).toBe(before)
  })
})

describe('without Redis, in mock mode', () => {
  it('keeps the index in the process: lists, ends one, caps', async () => {
    const mock = await stack.gatewayWith({ APP_AUTH_MOCK: 'true', APP_SESSION_MAX_PER_USER: '2' })
    const cookies = []
    for (let count = 0; count < 3; count++) {
      const answer = await postLogin(mock, { username: 'mock', password: 'x' }, { 'user-agent': SAFARI_IPHONE })
      expect(answer.status).toBe(200)
      cookies.push(sessionCookieOf(answer))
    }
    expect(await userOf(mock, cookies[0]!)).toBeNull()
    const listed = await sessionsOf(mock, cookies[2]!)
    expect(listed.map(session => [session.device, session.current])).toEqual([['Safari on iPhone', true], ['Safari on iPhone', false]])
    expect((await post(mock, '/auth/sessions/end', cookies[2]!, { id: listed[1]!.id })).status).toBe(200)
    expect(await userOf(mock, cookies[1]!)).toBeNull()
    expect(await userOf(mock, cookies[2]!)).toMatchObject({ id: 'mock-user' })
  })
})
