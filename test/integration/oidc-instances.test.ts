import { setTimeout as sleep } from 'node:timers/promises'
import type { Socket } from 'node:net'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { freePort } from '../support/gateway'
import { cookieAgent, logInWithProvider, untilTokenAge, useOidcStack, type CookieAgent } from '../support/oidc'
import { openSessionCookie } from '../support/sealed'
import { readByPeer } from '../support/tcp'

// Two gateway instances sharing a Redis, the development provider with 4-second access tokens and rotating refresh
// tokens (a refresh token used twice revokes the whole grant there).
const stack = useOidcStack({ instances: 2, provider: { accessTokenTtl: 4 } })
const [a, b] = [() => stack.gateways[0]!.url, () => stack.gateways[1]!.url]

const sessionAt = async (agent: CookieAgent, gateway: string) => (await (await agent.go(`${gateway}/auth/session`)).json()).user
const bearerAt = async (agent: CookieAgent, gateway: string) => (await (await agent.go(`${gateway}/api/who`)).json()).headers.authorization as string | undefined

async function signedIn(username: string): Promise<CookieAgent> {
  const agent = cookieAgent()
  const { url } = await logInWithProvider(agent, a(), stack.provider.url, { username, password: `${username}123` })
  expect(url.href).toBe(`${a()}/`)
  return agent
}

const STORE_DOWN = 'Không đọc được kho token của phiên đăng nhập (Redis). Vui lòng thử lại sau giây lát.'
const CLEARED_SESSION = 'svc_session=; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/; HttpOnly; SameSite=Lax; Secure'
const echoed = () => stack.echo.received!.length

/** Runs `work` with the shared Redis turned into a read-only replica (as a failover may leave it): reads answer, writes fail. */
async function withReadOnlyRedis<T>(work: () => Promise<T>): Promise<T> {
  const redis = new Redis(stack.redis!.url)
  try {
    // A master nobody listens on: the replica never syncs, so it keeps its data and serves it stale.
    await redis.replicaof('127.0.0.1', await freePort())
    return await work()
  }
  finally {
    await redis.replicaof('NO', 'ONE')
    redis.disconnect()
  }
}

/** A logout token of the provider for a subject (a new jti each time). */
const logoutToken = (sub: string) => stack.provider.sign({ iss: stack.provider.url, aud: 'gateway', iat: Math.floor(Date.now() / 1000), jti: crypto.randomUUID(), sub, events: { 'http://schemas.openid.net/event/backchannel-logout': {} } }, { key: 'current' })
const postLogoutToken = (gateway: string, token: string) => fetch(`${gateway}/auth/backchannel-logout`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ logout_token: token }) })

/** The shared Redis's keys under a prefix (the gateways' token records, revocations). */
async function countKeys(pattern: string): Promise<number> {
  const redis = new Redis(stack.redis!.url)
  try {
    return (await redis.keys(pattern)).length
  }
  finally {
    redis.disconnect()
  }
}

describe('OpenID Connect on two instances (APP_REDIS_URL)', () => {
  it('a session made on one instance works on the other, with the same token and no refresh', async () => {
    const agent = await signedIn('admin')
    const before = stack.provider.counters.refresh_token
    expect(await bearerAt(agent, b())).toBe(await bearerAt(agent, a()))
    expect((await sessionAt(agent, b()))?.id).toBe('u-admin')
    expect(stack.provider.counters.refresh_token).toBe(before)
  })

  it('20 parallel /api requests at the expiry, 10 on each instance, make exactly one refresh; rotation never logs out', async () => {
    const agent = await signedIn('sale')
    await Promise.all([bearerAt(agent, a()), bearerAt(agent, b())])
    await untilTokenAge(agent, 3_400)
    const before = { refreshes: stack.provider.counters.refresh_token, reuse: stack.provider.counters.refresh_token_reuse }
    const bearers = await Promise.all(Array.from({ length: 20 }, (_, index) => bearerAt(agent, index % 2 ? b() : a())))
    expect(stack.provider.counters.refresh_token - before.refreshes).toBe(1)
    expect(stack.provider.counters.refresh_token_reuse - before.reuse).toBe(0)
    expect(new Set(bearers).size).toBe(1)
    expect(bearers[0]).toMatch(/^Bearer /)
    // And the next renewal too: still one, still logged in on both.
    await sleep(3_300)
    await Promise.all(Array.from({ length: 10 }, (_, index) => bearerAt(agent, index % 2 ? b() : a())))
    expect(stack.provider.counters.refresh_token - before.refreshes).toBe(2)
    expect((await sessionAt(agent, a()))?.id).toBe('u-sale')
    expect((await sessionAt(agent, b()))?.id).toBe('u-sale')
  })

  it('a back-channel logout from the provider ends the session on both instances within a second', async () => {
    const agent = await signedIn('viewer')
    expect((await sessionAt(agent, b()))?.id).toBe('u-viewer')
    const sent = await stack.provider.backchannelLogout({ sub: 'u-viewer' })
    expect(sent.map((delivery: { ok: boolean }) => delivery.ok)).toEqual([true])
    const started = Date.now()
    expect(await sessionAt(agent, a())).toBeNull()
    while (await sessionAt(agent, b()) !== null) {
      expect(Date.now() - started).toBeLessThan(1_000)
      await sleep(50)
    }
    expect(await bearerAt(agent, b())).toBeUndefined()
  })

  it('a session whose tokens are gone (Redis emptied) is no session for /auth/verify, /auth/session or /api', async () => {
    const agent = await signedIn('admin')
    const redis = new Redis(stack.redis!.url)
    await redis.flushall()
    redis.disconnect()
    // Instance B never saw this session: it asks the store, which has nothing.
    expect((await agent.go(`${b()}/auth/verify`)).status).toBe(401)
    expect(await sessionAt(agent, b())).toBeNull()
    expect(await bearerAt(agent, b())).toBeUndefined()
  })

  it('a logout on one instance holds on the other', async () => {
    const agent = await signedIn('ops')
    const cookie = agent.jar.get('svc_session')!
    await agent.go(`${a()}/auth/logout`)
    agent.jar.set('svc_session', cookie) // a copy kept
    const started = Date.now()
    while (await sessionAt(agent, b()) !== null) {
      expect(Date.now() - started).toBeLessThan(1_000)
      await sleep(50)
    }
  })

  it('a token record read out of Redis is no session pasted as svc_session, on either instance; no sealed kind opens as another', async () => {
    const agent = await signedIn('admin')
    const trip = cookieAgent()
    await trip.go(`${a()}/auth/sso?redirect=/orders`)
    const tripCookie = trip.jar.get('__Host-svc_oidc')!
    const redis = new Redis(stack.redis!.url)
    const records = await Promise.all((await redis.keys('svc:oidc:tokens:*')).map(key => redis.get(key)))
    redis.disconnect()
    expect(records.length).toBeGreaterThan(0)
    expect(tripCookie).toMatch(/^v1\./)
    for (const stolen of [...records as string[], tripCookie]) {
      const thief = cookieAgent()
      thief.jar.set('svc_session', stolen)
      for (const gateway of [a(), b()]) {
        expect(await sessionAt(thief, gateway)).toBeNull()
        expect(await bearerAt(thief, gateway)).toBeUndefined()
        expect((await thief.go(`${gateway}/auth/verify`)).status).toBe(401)
      }
    }
    // The session cookie or a token record in the trip's place: no trip of this browser, whatever the state.
    const state = new URL((await trip.go(`${a()}/auth/sso`)).headers.get('location')!).searchParams.get('state')!
    for (const planted of [agent.jar.get('svc_session')!, records[0]!]) {
      const other = cookieAgent()
      other.jar.set('__Host-svc_oidc', planted)
      const answer = await other.go(`${a()}/auth/callback?code=x&state=${state}`)
      expect(answer.headers.get('location')).toBe('/auth/login?error=ssoExpired')
    }
    // The session itself still works, on both.
    expect((await sessionAt(agent, b()))?.id).toBe('u-admin')
  })

  it('a renewal the provider refuses with invalid_grant ends the session on both instances: revoked, its tokens dropped', async () => {
    const agent = await signedIn('admin')
    expect(await bearerAt(agent, b())).toBe(await bearerAt(agent, a()))
    const [records, revocations] = [await countKeys('svc:oidc:tokens:*'), await countKeys('svc:rev:s:*')]
    stack.provider.refuseTokenRequests(400, { error: 'invalid_grant', error_description: 'grant request is invalid' })
    try {
      await untilTokenAge(agent, 3_400, { before: 3_900 }) // the renewal is due (on A); the token still lives
      expect(await bearerAt(agent, a())).toBeUndefined()
    }
    finally {
      stack.provider.refuseTokenRequests()
    }
    expect(await sessionAt(agent, a())).toBeNull()
    await expect.poll(() => sessionAt(agent, b()), { timeout: 5_000 }).toBeNull()
    expect(await bearerAt(agent, b())).toBeUndefined()
    expect(await countKeys('svc:oidc:tokens:*')).toBe(records - 1)
    expect(await countKeys('svc:rev:s:*')).toBe(revocations + 1)
  })

  it('tokens the store did not take are no login: the browser gets no session', async () => {
    const agent = cookieAgent()
    const { url: callback } = await logInWithProvider(agent, a(), stack.provider.url, { until: at => at.pathname === '/auth/callback' })
    const answer = await withReadOnlyRedis(() => agent.go(callback))
    expect(answer.headers.get('location')).toBe('/auth/login?error=ssoFailed')
    // Cleared, and the sealed session that had no tokens was never sent.
    expect(answer.headers.getSetCookie().filter(line => line.startsWith('svc_session='))).toEqual([CLEARED_SESSION])
    expect(agent.jar.has('svc_session')).toBe(false)
  })

  it('Redis refusing writes at a renewal (no refresh lock): an expired access token is never sent on (503)', async () => {
    const agent = await signedIn('viewer')
    await bearerAt(agent, a())
    await withReadOnlyRedis(async () => {
      await sleep(4_500) // past the token's expiry
      const before = echoed()
      const answer = await agent.go(`${a()}/api/who`)
      expect(answer.status).toBe(503)
      expect(await answer.json()).toMatchObject({ statusCode: 503, statusMessage: STORE_DOWN })
      expect(echoed()).toBe(before)
    })
  })

  it('a back-channel logout whose handling failed (Redis refused) does not burn its jti: the provider\'s retry ends the sessions', async () => {
    const agent = await signedIn('ops')
    const token = await logoutToken('u-ops')
    const post = () => postLogoutToken(a(), token)
    const redis = new Redis(stack.redis!.url)
    // The jti is taken (SET), then the sessions of its sub cannot be read (SMEMBERS refused): the handling fails.
    await redis.acl('SETUSER', 'default', '-smembers')
    let failed: Response
    try {
      failed = await post()
    }
    finally {
      await redis.acl('SETUSER', 'default', '+smembers')
      redis.disconnect()
    }
    expect(failed.status).toBe(500)
    expect((await sessionAt(agent, a()))?.id).toBe('u-ops')
    const retried = await post()
    expect(retried.status).toBe(200)
    expect(await sessionAt(agent, a())).toBeNull()
    await expect.poll(() => sessionAt(agent, b()), { timeout: 5_000 }).toBeNull()
  })

  it('a back-channel logout whose jti Redis took too late (no answer within the budget) can be sent again: the retry ends the sessions', async () => {
    const agent = await signedIn('sale')
    const token = await logoutToken('u-sale')
    const redis = new Redis(stack.redis!.url)
    await redis.ping()
    // Redis stalls 3 s (it has read the command before the logout is posted): the gateway's SET of the jti waits behind
    // it, past the gateway's 500 ms budget, and is carried out late all the same.
    const stalled = redis.call('DEBUG', 'SLEEP', '3')
    await readByPeer((redis as unknown as { stream: Socket }).stream)
    const failed = await postLogoutToken(a(), token)
    await stalled
    redis.disconnect()
    expect(failed.status).toBe(500)
    expect((await sessionAt(agent, a()))?.id).toBe('u-sale')
    expect((await postLogoutToken(a(), token)).status).toBe(200)
    expect(await sessionAt(agent, a())).toBeNull()
    await expect.poll(() => sessionAt(agent, b()), { timeout: 5_000 }).toBeNull()
  })

  it('another instance\'s refresh lock that Redis will not show (EXISTS refused) is the store failing: 503 at the wait\'s end, not 502', async () => {
    const agent = await signedIn('viewer')
    await bearerAt(agent, a())
    const lock = `svc:oidc:lock:${openSessionCookie(agent.jar.get('svc_session')!, 'session-oidc').sid}`
    const redis = new Redis(stack.redis!.url)
    // Another holder's refresh lock (server/oidc/redis-token-store.ts KEY.lock), which the wait cannot see let go: as a
    // Cluster's lock slot without a primary while the record's answers, or an ACL without +exists.
    await redis.set(lock, 'another-instance', 'PX', 60_000)
    await redis.acl('SETUSER', 'default', '-exists')
    let answer: Response
    const sent = echoed()
    try {
      await sleep(4_500) // past the token's expiry
      answer = await agent.go(`${a()}/api/who`) // waits for the lock's holder as long as a refresh may hold it (15 s)
    }
    finally {
      await redis.acl('SETUSER', 'default', '+exists')
      await redis.del(lock)
      redis.disconnect()
    }
    expect(answer.status).toBe(503)
    expect(await answer.json()).toMatchObject({ statusCode: 503, statusMessage: STORE_DOWN })
    expect(echoed()).toBe(sent)
    await expect.poll(() => stack.gateways[0]!.stdout(), { timeout: 5_000 }).toMatch(/"userId":"u-viewer","storeFailed":true,"lockHolder":"another instance","msg":"chờ instance khác làm mới token OIDC quá hạn/)
    // Let go: the session renews.
    expect(await bearerAt(agent, a())).toMatch(/^Bearer /)
  })

  it('Redis down at a renewal: the current token serves while it lives, the user is not logged out; an expired one is never sent on (503)', async () => {
    const agent = await signedIn('sale')
    const before = await bearerAt(agent, a())
    await stack.redis!.stop()
    await untilTokenAge(agent, 3_400, { before: 3_900 }) // the renewal is due; the token has about 0.6 s left
    expect(await bearerAt(agent, a())).toBe(before)
    expect((await sessionAt(agent, a()))?.id).toBe('u-sale')
    await sleep(1_500) // the token has expired
    const sent = echoed()
    const answer = await agent.go(`${a()}/api/who`)
    expect(answer.status).toBe(503)
    expect(await answer.json()).toMatchObject({ statusCode: 503, statusMessage: STORE_DOWN })
    expect(echoed()).toBe(sent)
    expect((await sessionAt(agent, a()))?.id).toBe('u-sale')
  })
})
