import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { logEntries, startGateway } from '../support/gateway'
import { cookieAgent, logInWithProvider, oidcEnv, submitForm, untilTokenAge, useOidcStack, type CookieAgent } from '../support/oidc'
import { agedTrips, openTrips } from '../support/sealed'

// The development provider's access tokens live 4 s: a test that waits sees a refresh (renewed 1 s before the end).
const stack = useOidcStack({ provider: { accessTokenTtl: 4 } })
const gateway = () => stack.gateways[0]!.url
const provider = () => stack.provider.url

/** A signed-in agent. */
async function signedIn(username = 'admin', password = `${username}123`): Promise<CookieAgent> {
  const agent = cookieAgent()
  const { url } = await logInWithProvider(agent, gateway(), provider(), { username, password })
  expect(url.href).toBe(`${gateway()}/`)
  return agent
}

const sessionOf = async (agent: CookieAgent) => (await (await agent.go(`${gateway()}/auth/session`)).json()).user
const bearerOf = async (agent: CookieAgent) => (await (await agent.go(`${gateway()}/api/who`)).json()).headers.authorization as string | undefined
/** Stops a login at the gateway's callback (not fetched), to go there as the test decides. */
const atCallback = (at: URL) => at.pathname === '/auth/callback'

const now = () => Math.floor(Date.now() / 1000)
const EVENTS = { 'http://schemas.openid.net/event/backchannel-logout': {} }
/** POST /auth/backchannel-logout as the provider sends it. */
const postLogoutToken = (token: string) => fetch(`${gateway()}/auth/backchannel-logout`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ logout_token: token }) })

describe('OpenID Connect: logging in through the provider (APP_AUTH_KIND=oidc)', () => {
  it('lands on the page it started from, with the user mapped from the claims and a small cookie', async () => {
    const agent = cookieAgent()
    const { url } = await logInWithProvider(agent, gateway(), provider(), { from: '/orders?page=2' })
    expect(url.href).toBe(`${gateway()}/orders?page=2`)
    const user = await sessionOf(agent)
    expect(user).toMatchObject({ id: 'u-admin', email: expect.stringContaining('@'), roles: ['admin'] })
    expect(user.permissions).toContain('/orders/search')
    expect(agent.jar.get('svc_session')!.length).toBeLessThan(1500)
    expect(await bearerOf(agent)).toMatch(/^Bearer \S{20,}$/)
  })

  it('sends the browser to the provider with code + PKCE S256, state and nonce, bound by a short-lived cookie', async () => {
    const answer = await fetch(`${gateway()}/auth/sso?redirect=%2Fabout`, { redirect: 'manual' })
    expect(answer.status).toBe(302)
    const location = new URL(answer.headers.get('location')!)
    expect(location.origin).toBe(provider())
    expect(Object.fromEntries(location.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: 'gateway',
      redirect_uri: `${gateway()}/auth/callback`,
      code_challenge_method: 'S256',
      scope: 'openid profile email offline_access',
    })
    for (const name of ['state', 'nonce', 'code_challenge']) expect(location.searchParams.get(name)!.length).toBeGreaterThanOrEqual(43)
    // __Host-: Secure, Path=/, no Domain: no sibling subdomain or plain-http man in the middle can plant a trip.
    const cookie = answer.headers.getSetCookie()[0]!
    expect(cookie).toMatch(/^__Host-svc_oidc=v1\./)
    for (const attribute of ['Max-Age=600', 'Path=/;', 'HttpOnly', 'SameSite=Lax', 'Secure']) expect(cookie).toContain(attribute)
    expect(cookie).not.toMatch(/Domain=/i)
  })

  it.each(['//evil.test/x', 'https://evil.test/x', '/\\evil.test/x', '/.//evil.test/x', '/%2e%2e//evil.test/x', 'javascript:alert(1)'])('lands on the home page, never off-site, after a login started with ?redirect=%s (the one redirect rule)', async (from) => {
    const agent = cookieAgent()
    // Stops at the first address that is neither the provider's nor one of the gateway's /auth/ routes: where it lands.
    const landed = (at: URL) => at.origin !== provider() && !(at.origin === gateway() && at.pathname.startsWith('/auth/'))
    const { url } = await logInWithProvider(agent, gateway(), provider(), { from, until: landed })
    expect(url.href).toBe(`${gateway()}/`)
    expect((await sessionOf(agent))?.id).toBe('u-admin')
  })

  it('keeps at most three trips under way in a browser: a flood of /auth/sso cannot grow its cookies', async () => {
    const agent = cookieAgent()
    const states: string[] = []
    for (let trip = 0; trip < 20; trip++) {
      const location = new URL((await agent.go(`${gateway()}/auth/sso`)).headers.get('location')!)
      states.push(location.searchParams.get('state')!)
    }
    expect([...agent.jar.keys()]).toEqual(['__Host-svc_oidc'])
    expect(agent.jar.get('__Host-svc_oidc')!.length).toBeLessThan(1500)
    // The oldest trips are gone: their answer is no trip of this browser.
    expect((await agent.go(`${gateway()}/auth/callback?code=abc&state=${states[0]}`)).headers.get('location')).toBe('/auth/login?error=ssoExpired')
  })

  it('never writes a trips cookie browsers drop: a crafted redirect is capped, and the oldest trips go until it fits 4,096 bytes', async () => {
    const agent = cookieAgent()
    const lines: string[] = []
    const sso = async (redirect: string) => {
      const answer = await agent.go(`${gateway()}/auth/sso?redirect=${encodeURIComponent(redirect)}`)
      lines.push(...answer.headers.getSetCookie())
      return new URL(answer.headers.get('location')!).searchParams.get('state')!
    }
    // The review's link: 1,300 backslashes (JSON doubles each) would fill the cookie alone.
    const crafted = await sso(`/?${'\\'.repeat(1300)}`)
    // Within the cap (512), each trip still takes about 1.4 KB once sealed: three do not fit together.
    const long = `/orders?q=${'\\'.repeat(500)}`
    const states = [await sso(long), await sso(long), await sso(long)]
    for (const line of lines) expect(Buffer.byteLength(`Set-Cookie: ${line}`)).toBeLessThanOrEqual(4096)
    expect(Buffer.byteLength(`Set-Cookie: ${lines[0]}`)).toBeLessThan(1500)
    // The oldest trips went to make room; the newest ones still finish.
    expect((await agent.go(`${gateway()}/auth/callback?code=abc&state=${states[0]}`)).headers.get('location')).toBe('/auth/login?error=ssoExpired')
    expect((await agent.go(`${gateway()}/auth/callback?code=abc&state=${crafted}`)).headers.get('location')).toBe('/auth/login?error=ssoExpired')
    const { url } = await logInWithProvider(agent, gateway(), provider(), { from: long })
    expect(`${url.pathname}${url.search}`).toBe(long)
    // Past the cap, the trip returns to /.
    const past = cookieAgent()
    const landed = await logInWithProvider(past, gateway(), provider(), { from: `/orders?q=${'a'.repeat(600)}` })
    expect(landed.url.href).toBe(`${gateway()}/`)
  })

  it('keeps the whole user when the cookie had to drop permissions to fit 4 KB (session answer and /auth/verify)', async () => {
    const agent = await signedIn('power')
    const user = await sessionOf(agent)
    expect(user.permissions.length).toBeGreaterThan(120)
    expect(user.permissions).toContain('/module-30/action-4')
    expect((await agent.go(`${gateway()}/auth/verify?permission=/module-30/action-4`)).status).toBe(200)
  })

  it('answers POST /auth/login and /auth/otp/send with 400: use SSO', async () => {
    for (const path of ['/auth/login', '/auth/otp/send']) {
      const answer = await fetch(gateway() + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"username":"admin","password":"admin123"}' })
      expect(answer.status).toBe(400)
      expect(await answer.json()).toMatchObject({ statusCode: 400, statusMessage: 'Hệ thống đăng nhập bằng SSO: hãy dùng nút "Đăng nhập bằng SSO".' })
    }
  })
})

describe('OpenID Connect: what the callback refuses (the login page says why; no session, never a 500)', () => {
  const noSession = (agent: CookieAgent) => expect(agent.jar.has('svc_session')).toBe(false)

  it('a state this browser did not start', async () => {
    const agent = cookieAgent()
    const answer = await agent.go(`${gateway()}/auth/callback?code=abc&state=${'x'.repeat(43)}`)
    expect(answer.status).toBe(302)
    expect(answer.headers.get('location')).toBe('/auth/login?error=ssoExpired')
    noSession(agent)
  })

  it('a state swapped for another of the same browser', async () => {
    const agent = cookieAgent()
    const first = new URL((await agent.go(`${gateway()}/auth/sso`)).headers.get('location')!)
    const { url: callback } = await logInWithProvider(agent, gateway(), provider(), { until: at => at.pathname === '/auth/callback' })
    const swapped = new URL(callback)
    swapped.searchParams.set('state', first.searchParams.get('state')!)
    // The first trip's verifier does not match the second trip's code: the provider refuses the exchange.
    expect((await agent.go(swapped)).headers.get('location')).toMatch(/^\/auth\/login\?error=sso(Expired|Failed)$/)
    noSession(agent)
  })

  it('the provider\'s access_denied (the user cancelled there)', async () => {
    const agent = cookieAgent()
    const { url } = await logInWithProvider(agent, gateway(), provider(), { cancel: true, from: '/about' })
    expect(`${url.pathname}${url.search}`).toBe('/auth/login?error=ssoDenied&redirect=%2Fabout')
    noSession(agent)
  })

  it('a replayed code (the provider revokes what the first use gave)', async () => {
    const agent = cookieAgent()
    const { url: callback } = await logInWithProvider(agent, gateway(), provider(), { until: at => at.pathname === '/auth/callback' })
    const trip = [...agent.jar].find(([name]) => name === '__Host-svc_oidc')!
    expect((await agent.go(callback)).headers.get('location')).toBe('/')
    agent.jar.set(trip[0], trip[1]) // the trip's cookie, kept by an attacker
    agent.jar.delete('svc_session')
    expect((await agent.go(callback)).headers.get('location')).toBe('/auth/login?error=ssoExpired')
    noSession(agent)
  })

  const forged: Array<[string, (claims: Record<string, unknown>) => Record<string, unknown>, 'current' | 'foreign' | 'none']> = [
    ['an audience that is not ours', claims => ({ ...claims, aud: 'another-client' }), 'current'],
    ['another issuer', claims => ({ ...claims, iss: 'http://127.0.0.1:1/evil' }), 'current'],
    ['another nonce', claims => ({ ...claims, nonce: 'n'.repeat(43) }), 'current'],
    ['an expired token', claims => ({ ...claims, iat: Math.floor(Date.now() / 1000) - 3600, exp: Math.floor(Date.now() / 1000) - 1800 }), 'current'],
    ['no signature (alg: none)', claims => claims, 'none'],
    ['a key the JWKS does not hold', claims => claims, 'foreign'],
  ]
  it.each(forged)('an ID token with %s', async (_name, change, key) => {
    const forge = () => stack.provider.tamperNextTokenResponse(async (body: { id_token: string }, tools: { decode: (token: string) => Record<string, unknown>, sign: (claims: Record<string, unknown>, how: { key: string, kid?: string }) => Promise<string> }) =>
      ({ ...body, id_token: await tools.sign(change(tools.decode(body.id_token)), { key, ...(key === 'foreign' ? { kid: 'not-in-the-jwks' } : {}) }) }))
    forge()
    const agent = cookieAgent()
    let { url } = await logInWithProvider(agent, gateway(), provider(), { from: '/about', until: at => at.origin === gateway() && at.pathname !== '/auth/callback' })
    if (key === 'foreign') {
      // A key the JWKS does not hold: the provider may have rotated its keys; one new trip, which is forged again.
      expect(`${url.pathname}${url.search}`).toBe('/auth/sso?retry=1&redirect=%2Fabout')
      noSession(agent)
      forge()
      ;({ url } = await agent.follow(url, {}, at => at.origin === gateway() && at.pathname !== '/auth/callback'))
    }
    expect(`${url.pathname}${url.search}`).toBe('/auth/login?error=ssoFailed&redirect=%2Fabout')
    noSession(agent)
    expect(stack.gateways[0]!.output()).not.toMatch(/"level":50|at \S+ \(/)
  })
})

describe('OpenID Connect: a trip is used once, and lives 10 minutes', () => {
  const CLEARED_TRIP = '__Host-svc_oidc=; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/; HttpOnly; SameSite=Lax; Secure'
  const tripLine = (answer: Response) => answer.headers.getSetCookie().find(line => line.startsWith('__Host-svc_oidc='))
  /** Token requests the provider has seen (codes exchanged or refused). */
  const tokenRequests = () => stack.provider.counters.authorization_code + stack.provider.counters.grant_error

  it('a successful callback clears its trip: replayed, it finds nothing to ask the provider about', async () => {
    const agent = cookieAgent()
    const { url: callback } = await logInWithProvider(agent, gateway(), provider(), { until: atCallback })
    const done = await agent.go(callback)
    expect(done.headers.get('location')).toBe('/')
    expect(tripLine(done)).toBe(CLEARED_TRIP)
    const asked = tokenRequests()
    agent.jar.delete('svc_session')
    expect((await agent.go(callback)).headers.get('location')).toBe('/auth/login?error=ssoExpired')
    expect(tokenRequests()).toBe(asked)
    expect(agent.jar.has('svc_session')).toBe(false)
  })

  it('a successful callback takes its own trip out of the cookie and leaves the browser\'s other trip', async () => {
    const agent = cookieAgent()
    const other = new URL((await agent.go(`${gateway()}/auth/sso?redirect=%2Fabout`)).headers.get('location')!).searchParams.get('state')
    const { url: callback } = await logInWithProvider(agent, gateway(), provider(), { until: atCallback })
    expect(openTrips(agent.jar.get('__Host-svc_oidc')!)).toHaveLength(2)
    expect((await agent.go(callback)).headers.get('location')).toBe('/')
    expect(openTrips(agent.jar.get('__Host-svc_oidc')!).map(trip => trip.state)).toEqual([other])
    const asked = tokenRequests()
    agent.jar.delete('svc_session')
    expect((await agent.go(callback)).headers.get('location')).toBe('/auth/login?error=ssoExpired')
    expect(tokenRequests()).toBe(asked)
  })

  // No test waits 10 minutes: the trip's cookie is opened, its start moved back and sealed again (test/support/sealed.ts).
  it.each([
    ['9 minutes', '/about', 9 * 60_000, true],
    ['10 minutes and a second', '/auth/login?error=ssoExpired', 10 * 60_000 + 1_000, false],
  ])('a trip started %s ago: the callback goes to %s', async (_age, location, ms, loggedIn) => {
    const agent = cookieAgent()
    const { url: callback } = await logInWithProvider(agent, gateway(), provider(), { from: '/about', until: atCallback })
    agent.jar.set('__Host-svc_oidc', agedTrips(agent.jar.get('__Host-svc_oidc')!, ms))
    expect((await agent.go(callback)).headers.get('location')).toBe(location)
    expect(agent.jar.has('svc_session')).toBe(loggedIn)
  })
})

describe('OpenID Connect: tokens', () => {
  it('renews the access token before it expires: the session survives while the user keeps working', async () => {
    const agent = await signedIn()
    const first = await bearerOf(agent)
    const refreshes = stack.provider.counters.refresh_token
    for (let second = 0; second < 7; second++) {
      await sleep(1000)
      expect(await bearerOf(agent)).toMatch(/^Bearer /)
    }
    expect(await bearerOf(agent)).not.toBe(first)
    expect(stack.provider.counters.refresh_token - refreshes).toBeGreaterThanOrEqual(1)
    expect(stack.provider.counters.refresh_token_reuse).toBe(0)
    expect((await sessionOf(agent))?.id).toBe('u-admin')
  })

  it('20 parallel /api requests at the expiry make exactly one refresh, and the user stays logged in', async () => {
    const agent = await signedIn('sale', 'sale123')
    await bearerOf(agent)
    await untilTokenAge(agent, 3_400) // into the last second: every request below needs the renewal
    const before = stack.provider.counters.refresh_token
    const bearers = await Promise.all(Array.from({ length: 20 }, () => bearerOf(agent)))
    expect(stack.provider.counters.refresh_token - before).toBe(1)
    expect(new Set(bearers).size).toBe(1)
    expect(bearers[0]).toMatch(/^Bearer /)
    expect((await sessionOf(agent))?.id).toBe('u-sale')
  })

  it.each([
    ['invalid_client (401)', 401, { error: 'invalid_client', error_description: 'client authentication failed' }],
    ['a 503 with a JSON error', 503, { error: 'temporarily_unavailable', error_description: 'try again later' }],
    // A server error is no refusal of the grant, whatever its body says.
    ['a 500 whose JSON says invalid_grant', 500, { error: 'invalid_grant', error_description: 'server error' }],
  ])('a renewal refused with %s keeps the session: the current token while it lives, then 502, then a renewal', async (_name, status, body) => {
    const agent = await signedIn('ops')
    const first = await bearerOf(agent)
    const refreshes = stack.provider.counters.refresh_token
    stack.provider.refuseTokenRequests(status, body, Infinity)
    try {
      await untilTokenAge(agent, 3_400, { before: 3_900 }) // the renewal is due; the token has about 0.6 s left
      expect(await bearerOf(agent)).toBe(first)
      expect((await sessionOf(agent))?.id).toBe('u-ops')
      await sleep(1_500) // the token has expired; the provider still refuses
      const expired = await agent.go(`${gateway()}/api/who`)
      expect(expired.status).toBe(502)
      expect(await expired.json()).toMatchObject({ statusCode: 502, statusMessage: 'Không kết nối được IAM.' })
      expect((await sessionOf(agent))?.id).toBe('u-ops')
    }
    finally {
      stack.provider.refuseTokenRequests() // the provider answers again (for the other tests too)
    }
    // The same refresh token (never used) renews the session.
    expect(stack.provider.counters.refresh_token).toBe(refreshes)
    const renewed = await bearerOf(agent)
    expect(renewed).toMatch(/^Bearer /)
    expect(renewed).not.toBe(first)
    expect((await sessionOf(agent))?.id).toBe('u-ops')
  })

  it('keeps no token where a browser could read it: cookie, session answer, page', async () => {
    const agent = await signedIn()
    const token = (await bearerOf(agent))!.slice(7)
    const page = await (await agent.go(`${gateway()}/`)).text()
    const session = await (await agent.go(`${gateway()}/auth/session`)).text()
    for (const text of [page, session, [...agent.jar.values()].join(';')]) expect(text).not.toContain(token)
  })
})

describe('OpenID Connect: logout', () => {
  it('ends the session at the gateway and at the provider (end_session_endpoint with id_token_hint)', async () => {
    const agent = await signedIn()
    const leaving = await agent.go(`${gateway()}/auth/logout`)
    expect(leaving.status).toBe(302)
    const endSession = new URL(leaving.headers.get('location')!)
    expect(endSession.origin).toBe(provider())
    expect(endSession.searchParams.get('id_token_hint')).toMatch(/^ey/)
    expect(endSession.searchParams.get('post_logout_redirect_uri')).toBe(`${gateway()}/auth/logged-out`)
    expect(await sessionOf(agent)).toBeNull()
    const before = stack.provider.counters.end_session
    // The provider's sign-out page posts itself (a script): its form, sent as the browser would.
    const page = await agent.follow(endSession, {}, at => at.origin === gateway())
    const { url } = await submitForm(agent, await page.response.text(), provider(), at => at.origin === gateway())
    expect(url.origin + url.pathname).toBe(`${gateway()}/auth/logged-out`)
    expect(stack.provider.counters.end_session - before).toBe(1)
    // At the provider too: a new login asks for the password again.
    const again = await agent.follow(`${gateway()}/auth/sso`, {}, at => at.origin === gateway())
    expect(again.url.origin).toBe(provider())
    expect(await again.response.text()).toContain('name="password"')
  })

  it('revokes the refresh token at the provider even when the browser never reaches the provider\'s logout', async () => {
    let refreshToken: unknown
    stack.provider.tamperNextTokenResponse((body: { refresh_token: string }) => {
      refreshToken = body.refresh_token
      return body
    })
    const agent = await signedIn()
    expect(refreshToken).toEqual(expect.any(String))
    const revoked = stack.provider.counters.revocation
    expect((await agent.go(`${gateway()}/auth/logout`)).status).toBe(302) // the provider's logout is not followed
    await expect.poll(() => stack.provider.counters.revocation).toBe(revoked + 1)
    const refresh = await fetch(`${provider()}/token`, {
      method: 'POST',
      headers: { 'authorization': `Basic ${Buffer.from('gateway:gateway-secret').toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken as string }),
    })
    expect(refresh.status).toBe(400)
    expect(await refresh.json()).toMatchObject({ error: 'invalid_grant' })
  })

  it('a back-channel logout ends the sessions its sid finds only when its sub is theirs', async () => {
    let providerSid: unknown
    stack.provider.tamperNextTokenResponse((body: { id_token: string }, tools: { decode: (token: string) => Record<string, unknown> }) => {
      providerSid = tools.decode(body.id_token).sid
      return body
    })
    const agent = await signedIn('sale')
    expect(providerSid).toEqual(expect.any(String))
    const logoutToken = (sub: string) => stack.provider.sign({ iss: provider(), aud: 'gateway', iat: now(), jti: crypto.randomUUID(), sid: providerSid, sub, events: EVENTS }, { key: 'current' })
    expect((await postLogoutToken(await logoutToken('u-admin'))).status).toBe(200)
    expect((await sessionOf(agent))?.id).toBe('u-sale')
    expect(await bearerOf(agent)).toMatch(/^Bearer /)
    expect((await postLogoutToken(await logoutToken('u-sale'))).status).toBe(200)
    expect(await sessionOf(agent)).toBeNull()
  })

  it('a back-channel logout from the provider ends the session', async () => {
    const agent = await signedIn('viewer', 'viewer123')
    const sent = await stack.provider.backchannelLogout({ sub: 'u-viewer' })
    expect(sent.map((delivery: { ok: boolean }) => delivery.ok)).toEqual([true])
    expect(await sessionOf(agent)).toBeNull()
    expect(await bearerOf(agent)).toBeUndefined()
  })
})

describe('OpenID Connect: POST /auth/backchannel-logout refuses a logout token that does not check out (400)', () => {
  const valid = () => ({ iss: provider(), aud: 'gateway', iat: now(), jti: crypto.randomUUID(), sub: 'u-ops', events: EVENTS })
  const post = postLogoutToken

  it.each([
    ['with a nonce', { nonce: 'n' }, 'current'],
    ['without the events claim', { events: undefined }, 'current'],
    ['with another event', { events: { 'http://schemas.openid.net/event/other': {} } }, 'current'],
    ['without sid or sub', { sub: undefined }, 'current'],
    ['for another audience', { aud: 'another-client' }, 'current'],
    ['from another issuer', { iss: 'http://127.0.0.1:1' }, 'current'],
    ['issued an hour ago', { iat: now() - 3600 }, 'current'],
    ['unsigned (alg: none)', {}, 'none'],
    ['signed by a key the JWKS does not hold', {}, 'foreign'],
  ] as const)('%s', async (_name, change, key) => {
    const claims = Object.fromEntries(Object.entries({ ...valid(), ...change }).filter(([, value]) => value !== undefined))
    const answer = await post(await stack.provider.sign(claims, { key }))
    expect(answer.status).toBe(400)
    expect(await answer.json()).toMatchObject({ statusCode: 400, statusMessage: 'Logout token không hợp lệ.' })
  })

  it('takes a valid one once: its jti replayed is refused', async () => {
    const token = await stack.provider.sign(valid(), { key: 'current' })
    expect((await post(token)).status).toBe(200)
    expect((await post(token)).status).toBe(400)
  })

  it('refuses another body type (415) and a missing token (400)', async () => {
    expect((await fetch(`${gateway()}/auth/backchannel-logout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(415)
    expect((await post('')).status).toBe(400)
  })
})

describe('OpenID Connect: the provider\'s discovery', () => {
  it('keeps /readyz at 503 until the provider answers, then 200 (retried at start)', async () => {
    const { freePort } = await import('../support/gateway')
    const port = await freePort()
    const late = await startGateway(oidcEnv(stack, { APP_OIDC_ISSUER: `http://127.0.0.1:${port}` }))
    try {
      const ready = await fetch(`${late.url}/readyz`)
      expect(ready.status).toBe(503)
      expect(await ready.json()).toMatchObject({ status: 'starting', checks: { oidc: 'down' } })
      const early = await fetch(`${late.url}/auth/sso?redirect=%2Forders`, { redirect: 'manual' })
      expect(early.headers.get('location')).toBe('/auth/login?error=ssoUnavailable&redirect=%2Forders')
      const hostile = await fetch(`${late.url}/auth/sso?redirect=%2F%2Fevil.test%2Fx`, { redirect: 'manual' })
      expect(hostile.headers.get('location')).toBe('/auth/login?error=ssoUnavailable&redirect=%2F')
    }
    finally {
      await late.stop()
    }
    expect((await fetch(`${gateway()}/readyz`)).status).toBe(200)
  })

  it('warns at start without APP_OIDC_REDIRECT_URI and APP_TRUST_PROXY: behind a TLS proxy the redirect_uri would be http://', async () => {
    const configLines = (gateway: { stdout: () => string }) => logEntries(gateway.stdout()).filter(entry => entry.type === 'config').map(({ level, msg }) => ({ level, msg }))
    expect(configLines(stack.gateways[0]!)).toEqual([{
      level: 'warn',
      msg: 'APP_AUTH_KIND=oidc mà không có APP_OIDC_REDIRECT_URI và APP_TRUST_PROXY tắt: sau một proxy TLS (nginx, load balancer), '
        + 'redirect_uri gửi OpenID Provider sẽ là http://…/auth/callback. Đặt APP_TRUST_PROXY (số proxy đứng trước, hoặc địa chỉ của chúng) '
        + 'hoặc APP_OIDC_REDIRECT_URI=https://<gateway>/auth/callback.',
    }])
    // What a TLS proxy in front sends; the README's Keycloak example sets APP_TRUST_PROXY=1 for it.
    const behindTls = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'orders.example' }
    const redirectUri = async (url: string) => {
      const trip = await fetch(`${url}/auth/sso?redirect=%2F`, { redirect: 'manual', headers: behindTls })
      return new URL(trip.headers.get('location')!).searchParams.get('redirect_uri')
    }
    expect(await redirectUri(gateway())).toBe(`${gateway()}/auth/callback`)
    const trusting = await startGateway(oidcEnv(stack, { APP_TRUST_PROXY: '1' }))
    const fixed = await startGateway(oidcEnv(stack, { APP_OIDC_REDIRECT_URI: 'https://orders.example/auth/callback' }))
    try {
      expect(configLines(trusting)).toEqual([])
      expect(configLines(fixed)).toEqual([])
      await expect.poll(async () => (await fetch(`${trusting.url}/readyz`)).status).toBe(200)
      expect(await redirectUri(trusting.url)).toBe('https://orders.example/auth/callback')
    }
    finally {
      await Promise.all([trusting.stop(), fixed.stop()])
    }
  })

  it('APP_OIDC_AUTO_REDIRECT: the login page sends the browser straight on, but not after a failed trip', async () => {
    const auto = await startGateway(oidcEnv(stack, { APP_OIDC_AUTO_REDIRECT: 'true' }))
    try {
      const page = await fetch(`${auto.url}/auth/login?redirect=%2Forders`, { redirect: 'manual' })
      expect(page.status).toBe(302)
      expect(page.headers.get('location')).toBe('/auth/sso?redirect=%2Forders')
      const failed = await fetch(`${auto.url}/auth/login?error=ssoDenied&redirect=%2Forders`, { redirect: 'manual' })
      expect(failed.status).toBe(200)
      expect(await failed.text()).toContain('Đăng nhập SSO đã bị từ chối tại nhà cung cấp định danh.')
    }
    finally {
      await auto.stop()
    }
  })

  it('follows a rotation of the provider\'s signing keys', async () => {
    const working = await signedIn()
    await bearerOf(working)
    stack.provider.rotateKeys({ keepPrevious: false })
    // A renewal right after the rotation: its ID token is signed by a key not seen yet; the session goes on.
    const reuse = stack.provider.counters.refresh_token_reuse
    await untilTokenAge(working, 3_400)
    expect(await bearerOf(working)).toMatch(/^Bearer /)
    expect((await sessionOf(working))?.id).toBe('u-admin')
    expect(stack.provider.counters.refresh_token_reuse).toBe(reuse)
    const agent = cookieAgent()
    const { url } = await logInWithProvider(agent, gateway(), provider(), { from: '/about' })
    expect(url.href).toBe(`${gateway()}/about`)
    expect((await sessionOf(agent))?.id).toBe('u-admin')
  })
})
