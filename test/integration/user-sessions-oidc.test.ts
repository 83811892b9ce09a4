import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { cookieAgent, logInWithProvider, useOidcStack } from '../support/oidc'
import { rawRequest } from '../support/raw-http'
import { openSessionCookie } from '../support/sealed'

// A user's own sessions with OpenID Connect (issue 41, item 5): two instances sharing a Redis, where each session's
// tokens are kept beside it; ending a session from the list drops them as a logout does.
const stack = useOidcStack({ instances: 2 })
const [a, b] = [() => stack.gateways[0]!.url, () => stack.gateways[1]!.url]

const userOf = async (at: string, cookie: string) => (JSON.parse((await rawRequest(`${at}/auth/session`, { headers: { cookie } })).body) as { user: { id: string } | null }).user

describe('the sessions of an OpenID user', () => {
  it('lists them on either instance; ending one revokes it everywhere and drops its kept tokens', async () => {
    const [first, second] = [cookieAgent(), cookieAgent()]
    await logInWithProvider(first, a(), stack.provider.url, { username: 'sale', password: 'sale123' })
    await logInWithProvider(second, b(), stack.provider.url, { username: 'sale', password: 'sale123' })
    const mine = `svc_session=${first.jar.get('svc_session')!}`
    const other = `svc_session=${second.jar.get('svc_session')!}`
    const otherSid = openSessionCookie(other, 'session-oidc').sid
    const redis = new Redis(stack.redis!.url)
    try {
      expect(await redis.exists(`svc:oidc:tokens:${otherSid}`)).toBe(1)
      const listed = JSON.parse((await rawRequest(`${b()}/auth/sessions`, { headers: { cookie: mine } })).body) as { sessions: Array<{ id: string, current: boolean }> }
      expect(listed.sessions.map(session => session.current)).toEqual([true, false])
      const target = listed.sessions[1]!
      expect(target.id.startsWith(`${otherSid}.`)).toBe(true)
      const answer = await rawRequest(`${a()}/auth/sessions/end`, { method: 'POST', headers: { 'cookie': mine, 'content-type': 'application/json' }, body: JSON.stringify({ id: target.id }) })
      // Every instance within 1 s of the answer the user sees (the request's own time on a loaded machine is not it).
      const started = Date.now()
      expect([answer.status, answer.body]).toEqual([200, JSON.stringify({ current: false })])
      for (const at of [a(), b()]) await expect.poll(() => userOf(at, other), { timeout: 1_000, interval: 50 }).toBeNull()
      expect(Date.now() - started).toBeLessThan(1_000)
      expect(await redis.exists(`svc:oidc:tokens:${otherSid}`)).toBe(0)
      expect(await userOf(b(), mine)).toMatchObject({ id: expect.any(String) })
      const echoed = await (await fetch(`${b()}/api/who`, { headers: { cookie: mine } })).json() as { headers: Record<string, string> }
      expect(echoed.headers.authorization).toMatch(/^Bearer /)
    }
    finally {
      redis.disconnect()
    }
  })
})
