import { describe, expect, it } from 'vitest'
import { cookieAgent, logInWithProvider, useOidcStack } from '../support/oidc'

// The development provider's access tokens live 4 s: a test that waits sees a refresh.
const stack = useOidcStack({ provider: { accessTokenTtl: 4 } })
const gateway = () => stack.gateways[0]!.url

describe('OpenID Connect: logging in through the provider (APP_AUTH_KIND=oidc)', () => {
  it('lands on the page it started from, with the user mapped from the claims and a small cookie', async () => {
    const agent = cookieAgent()
    const { url } = await logInWithProvider(agent, gateway(), stack.provider.url, { from: '/orders?page=2' })
    expect(url.href).toBe(`${gateway()}/orders?page=2`)
    const session = await (await agent.go(`${gateway()}/auth/session`)).json()
    expect(session.user).toMatchObject({ id: 'u-admin', email: expect.stringContaining('@'), roles: ['admin'] })
    expect(session.user.permissions).toContain('/orders/search')
    expect(agent.jar.get('svc_session')!.length).toBeLessThan(1500)
    const echoed = await (await agent.go(`${gateway()}/api/who`)).json()
    expect(echoed.headers.authorization).toMatch(/^Bearer \S{20,}$/)
  })
})
