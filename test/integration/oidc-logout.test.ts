import { describe, expect, it } from 'vitest'
import { gatewayClient, startDevOidcProvider } from '../../dev/oidc-provider.mjs'
import { freePort, SERVER_ENTRY, startGateway } from '../support/gateway'
import { cookieAgent, logInWithProvider, oidcEnv, providerKnown, submitForm, useOidcStack, type CookieAgent } from '../support/oidc'

// RP-initiated logout that comes back: the provider's end_session_endpoint with client_id, id_token_hint and a state
// kept in a 10-minute sealed cookie; the provider sends the browser to /auth/logged-out, which checks the state and
// goes on to the `redirect` given to /auth/logout.
const stack = useOidcStack()
const gateway = () => stack.gateways[0]!.url
const provider = () => stack.provider.url
const LOGOUT_COOKIE = '__Host-svc_oidc_logout'

async function signedIn(): Promise<CookieAgent> {
  const agent = cookieAgent()
  await logInWithProvider(agent, gateway(), provider())
  expect(agent.jar.has('svc_session')).toBe(true)
  return agent
}

/** GET /auth/logout?redirect=…: the provider's end-session URL it answers with. */
async function loggingOut(agent: CookieAgent, redirect: string): Promise<URL> {
  const leaving = await agent.go(`${gateway()}/auth/logout?redirect=${encodeURIComponent(redirect)}`)
  expect(leaving.status).toBe(302)
  return new URL(leaving.headers.get('location')!)
}

/** Through the provider's sign-out page (it posts itself) to the first gateway address: the post-logout redirect. */
async function throughProvider(agent: CookieAgent, endSession: URL): Promise<URL> {
  const page = await agent.follow(endSession, {}, at => at.origin === gateway())
  const { url } = await submitForm(agent, await page.response.text(), provider(), at => at.origin === gateway())
  return url
}

describe('OpenID Connect: RP-initiated logout comes back to the app', () => {
  it('sends client_id, id_token_hint and a random state, and lands on the logout\'s redirect', async () => {
    const agent = await signedIn()
    const endSession = await loggingOut(agent, '/orders?page=2')
    expect(endSession.origin + endSession.pathname).toBe(`${provider()}/session/end`)
    expect(Object.fromEntries(endSession.searchParams)).toMatchObject({ client_id: 'gateway', post_logout_redirect_uri: `${gateway()}/auth/logged-out` })
    expect(endSession.searchParams.get('id_token_hint')).toMatch(/^ey/)
    expect(endSession.searchParams.get('state')).toMatch(/^[\w-]{43}$/)
    expect(agent.jar.has(LOGOUT_COOKIE)).toBe(true)
    const back = await throughProvider(agent, endSession)
    // The provider echoes the state.
    expect(back.pathname).toBe('/auth/logged-out')
    expect(back.searchParams.get('state')).toBe(endSession.searchParams.get('state'))
    const landed = await agent.go(back)
    expect(landed.status).toBe(302)
    expect(landed.headers.get('location')).toBe('/orders?page=2')
    expect(agent.jar.has(LOGOUT_COOKIE)).toBe(false)
    expect(agent.jar.has('svc_session')).toBe(false)
  })

  it('a new random state each time', async () => {
    const states = new Set<string>()
    for (let round = 0; round < 3; round++) states.add((await loggingOut(await signedIn(), '/')).searchParams.get('state')!)
    expect(states.size).toBe(3)
  })

  it.each([
    ['a state that is not this browser\'s', (state: string) => `?state=${'x'.repeat(state.length)}`, true, '/'],
    ['no state (a provider that does not echo it)', () => '', true, '/about'],
    ['no logout cookie (another browser, or 10 minutes later)', (state: string) => `?state=${state}`, false, '/'],
  ])('/auth/logged-out with %s', async (_name, query, keepCookie, location) => {
    const agent = await signedIn()
    const state = (await loggingOut(agent, '/about')).searchParams.get('state')!
    if (!keepCookie) agent.jar.delete(LOGOUT_COOKIE)
    const landed = await agent.go(`${gateway()}/auth/logged-out${query(state)}`)
    expect(landed.status).toBe(302)
    expect(landed.headers.get('location')).toBe(location)
    expect(agent.jar.has(LOGOUT_COOKIE)).toBe(false)
  })

  it('a provider without end_session_endpoint: the gateway\'s own page at once', async () => {
    const port = await freePort()
    const bare = await startDevOidcProvider({ endSession: false, clients: [gatewayClient({ origin: `http://127.0.0.1:${port}`, clientSecret: 'gateway-secret' })] })
    const own = await startGateway(oidcEnv({ provider: bare, echo: stack.echo }), SERVER_ENTRY, port)
    try {
      await providerKnown(own)
      const agent = cookieAgent()
      await logInWithProvider(agent, own.url, bare.url)
      expect(agent.jar.has('svc_session')).toBe(true)
      const leaving = await agent.go(`${own.url}/auth/logout?redirect=%2Fabout`)
      expect(leaving.status).toBe(302)
      expect(leaving.headers.get('location')).toBe('/about')
      expect(agent.jar.has('svc_session')).toBe(false)
      expect(agent.jar.has(LOGOUT_COOKIE)).toBe(false)
    }
    finally {
      await Promise.all([own.stop(), bare.close()])
    }
  })
})
