import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { cookieAgent, logInWithProvider, useOidcStack, type CookieAgent } from '../support/oidc'

// Two gateway instances sharing a Redis, the development provider with 4-second access tokens and rotating refresh
// tokens (a refresh token used twice revokes the whole grant there).
const stack = useOidcStack({ instances: 2, provider: { accessTokenTtl: 4 } })
const [a, b] = [() => stack.gateways[0]!.url, () => stack.gateways[1]!.url]
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

const sessionAt = async (agent: CookieAgent, gateway: string) => (await (await agent.go(`${gateway}/auth/session`)).json()).user
const bearerAt = async (agent: CookieAgent, gateway: string) => (await (await agent.go(`${gateway}/api/who`)).json()).headers.authorization as string | undefined

async function signedIn(username: string): Promise<CookieAgent> {
  const agent = cookieAgent()
  const { url } = await logInWithProvider(agent, a(), stack.provider.url, { username, password: `${username}123` })
  expect(url.href).toBe(`${a()}/`)
  return agent
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
    await sleep(3_300)
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

  it('Redis down at a renewal: the current token serves while it lives, the user is not logged out', async () => {
    const agent = await signedIn('sale')
    const before = await bearerAt(agent, a())
    await stack.redis!.stop()
    await sleep(3_300) // the renewal is due; the token has about 0.7 s left
    expect(await bearerAt(agent, a())).toBe(before)
    expect((await sessionAt(agent, a()))?.id).toBe('u-sale')
  })
})
