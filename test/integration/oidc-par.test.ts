import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gatewayClient, startDevOidcProvider } from '../../dev/oidc-provider.mjs'
import { startEchoBackend } from '../support/echo-backend'
import { freePort, SERVER_ENTRY, startGateway, type RunningGateway } from '../support/gateway'
import { cookieAgent, logInWithProvider, oidcEnv, providerKnown, type DevOidcProvider } from '../support/oidc'

// Pushed authorization requests (RFC 9126): the login's parameters go to the provider's PAR endpoint, authenticated as
// the token requests are; the browser's trip to the provider carries only client_id and request_uri. Two development
// providers: one that requires PAR of every client (its discovery says so), one that requires it of one client alone
// (the gateway is told by APP_OIDC_PAR=true).
let echo: Awaited<ReturnType<typeof startEchoBackend>>
const providers: Record<'all' | 'one', DevOidcProvider> = {} as never
const ports: Record<string, number> = {}

beforeAll(async () => {
  for (const name of ['all', 'one', 'plain']) ports[name] = await freePort()
  const origin = (name: string) => `http://127.0.0.1:${ports[name]}`
  ;[echo, providers.all, providers.one] = await Promise.all([
    startEchoBackend(),
    startDevOidcProvider({ requirePar: true, clients: [gatewayClient({ origin: origin('all'), clientSecret: 'gateway-secret' })] }),
    startDevOidcProvider({
      clients: [
        gatewayClient({ origin: origin('one'), clientSecret: 'gateway-secret', require_pushed_authorization_requests: true }),
        gatewayClient({ origin: origin('plain'), clientId: 'plain', clientSecret: 'gateway-secret', require_pushed_authorization_requests: true }),
      ],
    }),
  ])
}, 60_000)
afterAll(async () => {
  await Promise.all([echo?.close(), providers.all?.close(), providers.one?.close()])
})

async function withGateway(name: string, provider: DevOidcProvider, env: Record<string, string>, use: (gateway: RunningGateway) => Promise<void>) {
  const gateway = await startGateway(oidcEnv({ provider, echo }, env), SERVER_ENTRY, ports[name])
  try {
    await providerKnown(gateway)
    await use(gateway)
  }
  finally {
    await gateway.stop()
  }
}

describe('OpenID Connect: pushed authorization requests (PAR)', () => {
  it.each([
    ['the provider requires it of every client (its discovery says so)', 'all', {}],
    ['APP_OIDC_PAR=true, for a client the provider requires it of', 'one', { APP_OIDC_PAR: 'true' }],
  ] as const)('%s: the browser carries only client_id and request_uri, and the login works', async (_name, name, env) => {
    const provider = providers[name]
    await withGateway(name, provider, env, async (gateway) => {
      const trip = await fetch(`${gateway.url}/auth/sso?redirect=%2Fabout`, { redirect: 'manual' })
      expect(trip.status).toBe(302)
      const front = new URL(trip.headers.get('location')!)
      expect(front.origin + front.pathname).toBe(`${provider.url}/auth`)
      expect([...front.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri'])
      expect(front.searchParams.get('client_id')).toBe('gateway')
      expect(front.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:/)
      // Pushed with the client's own authentication (client_secret_basic here).
      expect(provider.events.filter(event => event.type === 'client_auth' && event.detail?.startsWith('/request '))).toContainEqual(expect.objectContaining({ clientId: 'gateway', detail: '/request client_secret_basic' }))
      const agent = cookieAgent()
      const { url } = await logInWithProvider(agent, gateway.url, provider.url, { from: '/about' })
      expect(url.href).toBe(`${gateway.url}/about`)
      expect((await (await agent.go(`${gateway.url}/api/who`)).json()).headers.authorization).toMatch(/^Bearer \S{20,}$/)
    })
  }, 60_000)

  it('without APP_OIDC_PAR, a client the provider alone requires it of is refused there: the browser comes back to the login page', async () => {
    await withGateway('plain', providers.one, { APP_OIDC_CLIENT_ID: 'plain' }, async (gateway) => {
      const front = new URL((await fetch(`${gateway.url}/auth/sso`, { redirect: 'manual' })).headers.get('location')!)
      expect(front.searchParams.get('redirect_uri')).toBe(`${gateway.url}/auth/callback`)
      const agent = cookieAgent()
      const { url } = await logInWithProvider(agent, gateway.url, providers.one.url, { from: '/about', until: at => at.origin === gateway.url && at.pathname !== '/auth/callback' })
      expect(`${url.pathname}${url.search}`).toBe('/auth/login?error=ssoFailed&redirect=%2Fabout')
    })
  }, 60_000)

  it('a PAR endpoint that refuses the client: the login page says why, never a 500', async () => {
    await withGateway('one', providers.one, { APP_OIDC_PAR: 'true', APP_OIDC_CLIENT_SECRET: 'wrong-secret' }, async (gateway) => {
      const trip = await fetch(`${gateway.url}/auth/sso?redirect=%2Fabout`, { redirect: 'manual' })
      expect(trip.status).toBe(302)
      expect(trip.headers.get('location')).toBe('/auth/login?error=ssoFailed&redirect=%2Fabout')
      expect(trip.headers.getSetCookie()).toEqual([])
    })
  }, 60_000)
})
