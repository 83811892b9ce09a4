import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loginCookie } from '../support/login'
import type { RunningGateway } from '../support/gateway'
import { rawRequest } from '../support/raw-http'
import { redisClient, type RunningRedis } from '../support/redis'
import { useStack } from '../support/stack'

const HOUR = 60 * 60_000

const stack = useStack({ iam: { slowMs: 3_000 } })
const login = loginCookie

async function session(gateway: RunningGateway, cookie: string) {
  const answer = await rawRequest(`${gateway.url}/auth/session`, { headers: { cookie } })
  expect(answer.status).toBe(200)
  return JSON.parse(answer.body) as { user: { id: string } | null, expiresAt: number | null }
}

async function backendAuthorization(gateway: RunningGateway, cookie: string) {
  const before = stack.echo.received.length
  await rawRequest(`${gateway.url}/api/orders`, { headers: { cookie } })
  return stack.echo.received[before]!.headers.authorization
}

const logout = (gateway: RunningGateway, cookie: string) => rawRequest(`${gateway.url}/auth/logout`, { headers: { cookie } })

describe('logout ends the session, not only the browser\'s copy', () => {
  it('makes a replayed cookie no session on /auth/session and /api/**', async () => {
    const gateway = await stack.gatewayWith()
    const cookie = await login(gateway, 'sale', 'sale123')
    expect((await session(gateway, cookie)).user?.id).toBe('u-sale')
    expect(await backendAuthorization(gateway, cookie)).toMatch(/^Bearer dev\./)
    expect((await logout(gateway, cookie)).status).toBe(302)
    expect(await session(gateway, cookie)).toEqual({ user: null, expiresAt: null })
    expect(await backendAuthorization(gateway, cookie)).toBeUndefined()
    // The same user's other sessions are not touched.
    const other = await login(gateway, 'sale', 'sale123')
    expect((await session(gateway, other)).user?.id).toBe('u-sale')
  })

  it('revokes every session the Cookie header holds: a planted second value does not keep the real one alive', async () => {
    const gateway = await stack.gatewayWith()
    const [mine, planted] = [await login(gateway, 'sale', 'sale123'), await login(gateway, 'viewer', 'viewer123')]
    expect((await logout(gateway, `${planted}; ${mine}`)).status).toBe(302)
    for (const cookie of [mine, planted]) {
      expect(await session(gateway, cookie)).toEqual({ user: null, expiresAt: null })
      expect(await backendAuthorization(gateway, cookie)).toBeUndefined()
    }
  })

  it('tells the IAM once, with the raw token, and a stalled IAM does not hold the logout', async () => {
    // A 2 s IAM limit (the shipped 10 s is checked in test/unit/config.test.ts): longer than the logout may take.
    const gateway = await stack.gatewayWith({ APP_AUTH_ENDPOINTS_LOGOUT: '/auth/auth/logout', APP_AUTH_TIMEOUT: '2' })
    const cookie = await login(gateway, 'viewer', 'viewer123')
    const token = stack.iam.requests.filter(request => request.path === '/iam/user/userInfo').at(-1)!.headers.authorization
    expect((await logout(gateway, cookie)).status).toBe(302)
    await expect.poll(() => stack.iam.requests.filter(request => request.path === '/auth/auth/logout').map(request => request.headers.authorization)).toEqual([token])

    const stalled = await login(gateway, 'viewer', 'viewer123')
    stack.iam.state.scenario = 'slow'
    try {
      const started = Date.now()
      const answer = await logout(gateway, stalled)
      expect(answer.status).toBe(302)
      expect(Date.now() - started).toBeLessThan(1_000)
      expect(await session(gateway, stalled)).toEqual({ user: null, expiresAt: null })
      // The IAM's limit ends the call; the failure is logged, never the token.
      await expect.poll(() => gateway.output(), { timeout: 5_000 }).toMatch(/IAM không nhận được thông báo đăng xuất \(504/)
      expect(gateway.output()).not.toContain(token!)
    }
    finally {
      stack.iam.state.scenario = 'normal'
    }
  })
})

describe('GET /auth/session says when the session ends', () => {
  it('is the token\'s expiry for a short-lived token', async () => {
    const gateway = await stack.gatewayWith()
    const before = Date.now()
    const cookie = await login(gateway, 'short-lived', 'short123')
    const after = Date.now()
    const { expiresAt } = await session(gateway, cookie)
    expect(expiresAt).toBeGreaterThanOrEqual(before + 2_000)
    expect(expiresAt).toBeLessThanOrEqual(after + 2_000)
  })

  it('is the token\'s expiry of an hour for a usual IAM token', async () => {
    const gateway = await stack.gatewayWith()
    const before = Date.now()
    const cookie = await login(gateway, 'admin', 'admin123')
    const after = Date.now()
    const { expiresAt } = await session(gateway, cookie)
    expect(expiresAt).toBeGreaterThanOrEqual(before + HOUR)
    expect(expiresAt).toBeLessThanOrEqual(after + HOUR)
  })

  it('is the 8-hour end without a token expiry (mock mode)', async () => {
    const gateway = await stack.gatewayWith({ APP_AUTH_MOCK: 'true' })
    const before = Date.now()
    const cookie = await login(gateway, 'alice', 'x')
    const after = Date.now()
    const { expiresAt } = await session(gateway, cookie)
    expect(expiresAt).toBeGreaterThanOrEqual(before + 8 * HOUR)
    expect(expiresAt).toBeLessThanOrEqual(after + 8 * HOUR)
  })
})

describe('revocations shared through Redis', () => {
  let redis: RunningRedis
  let first: RunningGateway
  let second: RunningGateway
  let client: Awaited<ReturnType<typeof redisClient>>
  beforeAll(async () => {
    redis = await stack.redisServer()
    client = await redisClient(redis.url)
    const env = { APP_REDIS_URL: redis.url }
    ;[first, second] = await Promise.all([stack.gatewayWith(env), stack.gatewayWith(env)])
  })
  afterAll(async () => {
    client?.disconnect()
    await redis?.stop()
  })

  it('a logout on one instance holds on the other within 1 s', async () => {
    const cookie = await login(first, 'sale', 'sale123')
    expect((await session(second, cookie)).user?.id).toBe('u-sale')
    await logout(first, cookie)
    const started = Date.now()
    await expect.poll(async () => (await session(second, cookie)).user, { timeout: 1_000, interval: 50 }).toBeNull()
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(await backendAuthorization(second, cookie)).toBeUndefined()
  })

  it('revokeUserSessions from the app\'s server route ends the user\'s sessions on the other instance', async () => {
    const admin = await login(first, 'admin', 'admin123')
    const sale = await login(second, 'sale', 'sale123')
    const answer = await rawRequest(`${first.url}/api/admin/revoke-user`, { method: 'POST', headers: { 'cookie': admin, 'content-type': 'application/json' }, body: JSON.stringify({ userId: 'u-sale' }) })
    expect(answer.status).toBe(200)
    await expect.poll(async () => (await session(second, sale)).user, { timeout: 1_000, interval: 50 }).toBeNull()
    expect((await session(first, admin)).user?.id).toBe('u-admin')
    // A login after the revocation is a session again.
    const again = await login(second, 'sale', 'sale123')
    expect((await session(first, again)).user?.id).toBe('u-sale')
  })

  it('refuses revokeUserSessions to a user without the admin role', async () => {
    const viewer = await login(first, 'viewer', 'viewer123')
    const answer = await rawRequest(`${first.url}/api/admin/revoke-user`, { method: 'POST', headers: { 'cookie': viewer, 'content-type': 'application/json' }, body: JSON.stringify({ userId: 'u-sale' }) })
    expect(answer.status).toBe(403)
  })

  it('keeps a revocation in Redis until the session\'s own 8-hour end, not a moment less or more', async () => {
    const cookie = await login(first, 'viewer', 'viewer123')
    const before = new Set(await client.keys('svc:rev:s:*'))
    await logout(first, cookie)
    await expect.poll(async () => (await client.keys('svc:rev:s:*')).filter(key => !before.has(key))).toHaveLength(1)
    const [key] = (await client.keys('svc:rev:s:*')).filter(key => !before.has(key))
    // Logged in and out a moment ago: what is left of 8 hours.
    const ttl = await client.pttl(key!)
    expect(ttl).toBeLessThanOrEqual(8 * HOUR)
    expect(ttl).toBeGreaterThan(8 * HOUR - 60_000)
  })

  it('checks requests without any Redis command: 1,000 proxied requests', async () => {
    const cookie = await login(first, 'viewer', 'viewer123')
    const calls = async () => {
      const stats = await client.info('commandstats')
      return [...stats.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)].filter(([, name]) => name !== 'info').reduce((sum, [, , count]) => sum + Number(count), 0)
    }
    const before = await calls()
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(Array.from({ length: 100 }, () => rawRequest(`${first.url}/api/orders`, { headers: { cookie } })))
      expect(answers.every(answer => answer.status === 200)).toBe(true)
    }
    expect(await calls()).toBe(before)
  })

  it('keeps serving while Redis is down, and catches up when it returns', async () => {
    const cookie = await login(first, 'sale', 'sale123')
    const copy = await login(first, 'sale', 'sale123')
    await redis.stop()
    // No error answers meanwhile; the logout holds on the instance that made it.
    expect((await logout(first, cookie)).status).toBe(302)
    expect(await session(first, cookie)).toEqual({ user: null, expiresAt: null })
    expect((await session(second, copy)).user?.id).toBe('u-sale')
    expect((await rawRequest(`${second.url}/api/orders`, { headers: { cookie: copy } })).status).toBe(200)
    redis = await stack.redisServer(redis.port)
    // Back: the other instance learns of the logout made during the outage.
    await expect.poll(async () => (await session(second, cookie)).user, { timeout: 15_000, interval: 200 }).toBeNull()
    expect((await session(second, copy)).user?.id).toBe('u-sale')
    await expect.poll(() => first.output()).toMatch(/Redis đã trở lại/)
  }, 30_000)
})
