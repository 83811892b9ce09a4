import { describe, expect, it } from 'vitest'
import { cookieAgent, logInWithProvider, useOidcStack } from '../support/oidc'
import { agedSessionCookie, openSessionCookie } from '../support/sealed'

// APP_SESSION_IDLE_TIMEOUT with OpenID Connect (issue 41, item 1): two instances sharing a Redis, where the session's
// tokens are kept (by its id, which a re-seal keeps).
const IDLE = 10 * 60_000
const stack = useOidcStack({ instances: 2, env: { APP_SESSION_IDLE_TIMEOUT: '10' } })
const [a, b] = [() => stack.gateways[0]!.url, () => stack.gateways[1]!.url]

const get = (url: string, cookie: string, peek = false) => fetch(url, { headers: { cookie, ...(peek ? { 'x-session-peek': '1' } : {}) }, redirect: 'manual' })

describe('the idle timeout with OpenID Connect', () => {
  it('ends an idle session on both instances, and slides a used one, whose tokens follow it', async () => {
    const agent = cookieAgent()
    await logInWithProvider(agent, a(), stack.provider.url, { username: 'sale', password: 'sale123' })
    const login = agent.jar.get('svc_session')!
    expect(openSessionCookie(login, 'session-oidc').seen).toBeTypeOf('number')
    const idle = agedSessionCookie(login, { seenAgo: IDLE + 1_000 }, 'session-oidc')
    for (const at of [a(), b()]) {
      expect(await (await get(`${at}/auth/session`, idle)).json()).toEqual({ user: null, expiresAt: null })
      expect((await (await get(`${at}/api/who`, idle)).json()).headers.authorization).toBeUndefined()
      expect((await get(`${at}/auth/verify`, idle)).status).toBe(401)
    }
    const due = agedSessionCookie(login, { seenAgo: IDLE / 4 + 1_000 }, 'session-oidc')
    const answer = await get(`${a()}/api/who`, due)
    expect((await answer.json()).headers.authorization).toMatch(/^Bearer /)
    const slid = answer.headers.getSetCookie().find(line => line.startsWith('svc_session='))!.split(';', 1)[0]!
    expect(openSessionCookie(slid, 'session-oidc').sid).toBe(openSessionCookie(login, 'session-oidc').sid)
    // The other instance finds the session's tokens for the new cookie.
    expect((await (await get(`${b()}/auth/session`, slid, true)).json()).user.id).toBeTruthy()
    expect((await (await get(`${b()}/api/who`, slid)).json()).headers.authorization).toMatch(/^Bearer /)
  })
})
