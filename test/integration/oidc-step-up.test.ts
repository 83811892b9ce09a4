import { describe, expect, it } from 'vitest'
import { gatewayClient, MFA_CODE, startDevOidcProvider } from '../../dev/oidc-provider.mjs'
import { freePort, SERVER_ENTRY, startGateway } from '../support/gateway'
import { cookieAgent, logInWithProvider, oidcEnv, providerKnown, throughProviderForm, type CookieAgent } from '../support/oidc'
import { rawRequest } from '../support/raw-http'
import { STEP_UP, useStepUpStack } from '../support/step-up-stack'

// Step-up (OpenID Connect acr / auth_time, RFC 9470): a route of the routes file needs acr `mfa`; the development
// provider gives `mfa` only to a login that also typed the one-time code (asked when acr_values holds mfa). A backend
// answers its own RFC 9470 challenge on /challenge.
const stack = useStepUpStack()
const provider = () => stack.provider
const echo = () => stack.echo
const url = (path: string) => stack.gateway.url + path
const NAVIGATE = { 'sec-fetch-mode': 'navigate', 'accept': 'text/html' }

async function passwordOnly(username = 'admin'): Promise<CookieAgent> {
  const agent = cookieAgent()
  await logInWithProvider(agent, stack.gateway.url, provider().url, { username, password: `${username}123` })
  expect(agent.jar.has('svc_session')).toBe(true)
  return agent
}
const cookieOf = (agent: CookieAgent) => `svc_session=${agent.jar.get('svc_session')}`
const userOf = async (agent: CookieAgent) => (await (await agent.go(url('/auth/session'))).json()).user?.id

describe('OpenID Connect step-up: a route that needs acr mfa', () => {
  it('a script\'s request of a password-only session: 401 with the step-up hint, the backend not reached', async () => {
    const agent = await passwordOnly()
    const before = echo().received.length
    const answer = await rawRequest(url('/api/reports/summary'), { headers: { 'cookie': cookieOf(agent), 'accept': 'application/json', 'sec-fetch-mode': 'cors' } })
    expect(answer.status).toBe(401)
    expect(JSON.parse(answer.body)).toEqual({ ...STEP_UP, message: STEP_UP.statusMessage, stepUp: { acr: 'mfa', maxAge: null } })
    expect(echo().received.length).toBe(before)
    // The rest of /api goes on as before.
    expect((await rawRequest(url('/api/strict/x'), { headers: { cookie: cookieOf(agent) } })).status).toBe(200)
  })

  it('a navigation goes to the provider with acr_values, the one-time code makes it mfa, and the browser comes back to the page, the same user', async () => {
    const agent = await passwordOnly()
    const oldCookie = cookieOf(agent)
    const answer = await rawRequest(url('/api/reports/summary?month=5'), { headers: { cookie: oldCookie, ...NAVIGATE } })
    expect(answer.status).toBe(302)
    expect(answer.headers.location).toBe('/auth/sso?acr_values=mfa&redirect=%2Fapi%2Freports%2Fsummary%3Fmonth%3D5')
    const trip = await agent.go(url(answer.headers.location as string))
    const authorize = new URL(trip.headers.get('location')!)
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({ acr_values: 'mfa', prompt: 'login' })
    const { url: landed } = await throughProviderForm(agent, authorize, provider().url, { otp: MFA_CODE, stop: at => at.origin === stack.gateway.url && at.pathname !== '/auth/callback' })
    expect(`${landed.pathname}${landed.search}`).toBe('/api/reports/summary?month=5')
    expect(provider().events.filter(event => event.type === 'login').at(-1)).toMatchObject({ sub: 'u-admin', detail: 'mfa' })
    const passed = await rawRequest(url('/api/reports/summary?month=5'), { headers: { cookie: cookieOf(agent), accept: 'application/json' } })
    expect(passed.status).toBe(200)
    expect(JSON.parse(passed.body).headers.authorization).toMatch(/^Bearer /)
    expect(await userOf(agent)).toBe('u-admin')
    // The password-only session it replaced is over.
    expect((await rawRequest(url('/auth/session'), { headers: { cookie: oldCookie } })).body).toContain('"user":null')
  })

  it('another user at the provider is a new login: the earlier session ends and the browser lands on /, not on the page', async () => {
    const agent = await passwordOnly()
    const oldCookie = cookieOf(agent)
    const start = url('/auth/sso?acr_values=mfa&redirect=%2Fapi%2Freports%2Fsummary')
    // The provider's own session is dropped (its cookies), as in another browser profile: its form asks who logs in.
    for (const name of [...agent.jar.keys()]) if (name.startsWith('op_')) agent.jar.delete(name)
    const { url: landed } = await throughProviderForm(agent, start, provider().url, { username: 'sale', password: 'sale123', otp: MFA_CODE, stop: at => at.origin === stack.gateway.url && at.pathname !== '/auth/callback' })
    expect(landed.pathname).toBe('/')
    expect(await userOf(agent)).toBe('u-sale')
    expect((await rawRequest(url('/auth/session'), { headers: { cookie: oldCookie } })).body).toContain('"user":null')
  })

  it('a provider that answers a step-up with less than was asked: the login page says it failed, the earlier session stays', async () => {
    const agent = await passwordOnly()
    const oldCookie = cookieOf(agent)
    provider().tamperNextTokenResponse(async (body: { id_token: string }, tools: { decode: (token: string) => Record<string, unknown>, sign: (claims: Record<string, unknown>) => Promise<string> }) =>
      ({ ...body, id_token: await tools.sign({ ...tools.decode(body.id_token), acr: 'pwd' }) }))
    const start = url('/auth/sso?acr_values=mfa&redirect=%2Fapi%2Freports%2Fsummary')
    const { url: landed } = await throughProviderForm(agent, start, provider().url, { otp: MFA_CODE, stop: at => at.origin === stack.gateway.url && at.pathname !== '/auth/callback' })
    expect(`${landed.pathname}${landed.search}`).toBe('/auth/login?error=ssoFailed&redirect=%2Fapi%2Freports%2Fsummary')
    expect((await rawRequest(url('/auth/session'), { headers: { cookie: oldCookie } })).body).toContain('"id":"u-admin"')
  })
})

describe('OpenID Connect step-up: a backend\'s RFC 9470 challenge', () => {
  it('turns into the same answers: 401 with the hint for a script, the provider for a navigation', async () => {
    const agent = await passwordOnly()
    const xhr = await rawRequest(url('/api/strict/challenge'), { headers: { cookie: cookieOf(agent), accept: 'application/json' } })
    expect(xhr.status).toBe(401)
    expect(JSON.parse(xhr.body)).toEqual({ ...STEP_UP, message: STEP_UP.statusMessage, stepUp: { acr: 'mfa', maxAge: 300 } })
    expect(xhr.body).not.toContain('the backend')
    const navigation = await rawRequest(url('/api/strict/challenge'), { headers: { cookie: cookieOf(agent), ...NAVIGATE } })
    expect(navigation.status).toBe(302)
    expect(navigation.headers.location).toBe('/auth/sso?acr_values=mfa&max_age=300&redirect=%2Fapi%2Fstrict%2Fchallenge')
    // Without a session the backend's 401 goes back as it is.
    const anonymous = await rawRequest(url('/api/strict/challenge'))
    expect(anonymous.status).toBe(401)
    expect(anonymous.body).toBe('the backend\'s own words')
  })
})

describe('OpenID Connect step-up for the whole gateway (APP_OIDC_ACR_VALUES)', () => {
  it('every login asks for it (no prompt), a login that has it works, one that does not is refused', async () => {
    const port = await freePort()
    const strict = await startDevOidcProvider({ clients: [gatewayClient({ origin: `http://127.0.0.1:${port}`, clientSecret: 'gateway-secret' })] })
    const own = await startGateway(oidcEnv({ provider: strict, echo: echo() }, { APP_OIDC_ACR_VALUES: 'mfa' }), SERVER_ENTRY, port)
    try {
      await providerKnown(own)
      const front = new URL((await fetch(`${own.url}/auth/sso`, { redirect: 'manual' })).headers.get('location')!)
      expect(front.searchParams.get('acr_values')).toBe('mfa')
      expect(front.searchParams.has('prompt')).toBe(false)
      const back = (at: URL) => at.origin === own.url && at.pathname !== '/auth/callback'
      const agent = cookieAgent()
      const { url: landed } = await throughProviderForm(agent, `${own.url}/auth/sso?redirect=%2Fabout`, strict.url, { otp: MFA_CODE, stop: back })
      expect(`${landed.pathname}${landed.search}`).toBe('/about')
      expect((await (await agent.go(`${own.url}/api/who`)).json()).headers.authorization).toMatch(/^Bearer /)
      // A provider that logs in with less (acr pwd) makes no session.
      strict.tamperNextTokenResponse(async (body: { id_token: string }, tools: { decode: (token: string) => Record<string, unknown>, sign: (claims: Record<string, unknown>) => Promise<string> }) =>
        ({ ...body, id_token: await tools.sign({ ...tools.decode(body.id_token), acr: 'pwd' }) }))
      const other = cookieAgent()
      const refused = await throughProviderForm(other, `${own.url}/auth/sso?redirect=%2Fabout`, strict.url, { otp: MFA_CODE, stop: back })
      expect(`${refused.url.pathname}${refused.url.search}`).toBe('/auth/login?error=ssoFailed&redirect=%2Fabout')
      expect(other.jar.has('svc_session')).toBe(false)
    }
    finally {
      await Promise.all([own.stop(), strict.close()])
    }
  })
})
