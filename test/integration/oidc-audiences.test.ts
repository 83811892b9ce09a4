import { setTimeout as sleep } from 'node:timers/promises'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { startEchoBackend } from '../support/echo-backend'
import { cookieAgent, logInWithProvider, useOidcStack, type CookieAgent } from '../support/oidc'
import { startWsBackend } from '../support/ws-backend'

type Echo = Awaited<ReturnType<typeof startEchoBackend>>

// Two gateway instances sharing a real redis-server, the development provider with resource indicators (orders and
// billing: JWT access tokens whose `aud` is the resource), 6-second access tokens and rotating refresh tokens (a
// refresh token used twice revokes the whole grant there). Orders and billing each have a route with its own audience;
// /api/** else goes to the stack's echo backend with the session's main token.
const backends = {} as { orders: Echo, billing: Echo, live: Awaited<ReturnType<typeof startWsBackend>> }
const env: Record<string, string> = {}
beforeAll(async () => {
  const [orders, billing, live] = await Promise.all([startEchoBackend(), startEchoBackend(), startWsBackend()])
  Object.assign(backends, { orders, billing, live })
  const file = join(mkdtempSync(join(tmpdir(), 'svc-audiences-')), 'routes.yaml')
  writeFileSync(file, `
routes:
  - name: orders
    prefix: /api/orders
    target: ${orders.url}/o
    resource: http://orders.test
  - name: billing
    prefix: /api/billing
    target: ${billing.url}/b
    resource: http://billing.test
  - name: live
    prefix: /api/live
    target: ${live.url}
    resource: http://orders.test
  - name: narrow
    prefix: /api/narrow
    target: ${orders.url}/n
    scope: openid
  - name: reports
    prefix: /api/reports
    target: ${orders.url}/r
    scope: reports:read
  - name: exchanged
    prefix: /api/exchanged
    target: ${billing.url}/x
    resource: http://billing.test
    exchange: true
`)
  env.APP_API_ROUTES_FILE = file
})
// Registered before the stack's: closed after its gateways have stopped.
afterAll(async () => {
  await Promise.all([backends.orders?.close(), backends.billing?.close(), backends.live?.close()])
})
const stack = useOidcStack({ instances: 2, provider: { accessTokenTtl: 6 }, env })

const gateways = () => [stack.gateways[0]!.url, stack.gateways[1]!.url] as const

async function signedIn(username: string): Promise<CookieAgent> {
  const agent = cookieAgent()
  const [a] = gateways()
  const { url } = await logInWithProvider(agent, a, stack.provider.url, { username, password: `${username}123` })
  expect(url.href).toBe(`${a}/`)
  return agent
}

/** The Authorization a backend received for one request through a gateway (the echo backends answer what they got). */
async function bearerThrough(agent: CookieAgent, gateway: string, path: string): Promise<string> {
  const answer = await agent.go(`${gateway}${path}`)
  expect(answer.status).toBe(200)
  const authorization = (await answer.json()).headers.authorization as string | undefined
  expect(authorization).toMatch(/^Bearer /)
  return authorization!.slice(7)
}

const counters = () => ({ ...stack.provider.counters })

describe('tokens per audience (routes with resource) with the development OpenID Provider', () => {
  it('each route\'s backend receives a token for its own audience; the default route the session\'s main token', async () => {
    const agent = await signedIn('admin')
    const [a, b] = gateways()
    const orders = decodeJwt(await bearerThrough(agent, a, '/api/orders/list'))
    const billing = decodeJwt(await bearerThrough(agent, b, '/api/billing/invoices'))
    expect(orders).toMatchObject({ aud: 'http://orders.test', sub: 'u-admin', iss: stack.provider.url })
    expect(billing).toMatchObject({ aud: 'http://billing.test', sub: 'u-admin', iss: stack.provider.url })
    expect(backends.orders.received.at(-1)!.url).toBe('/o/list')
    expect(backends.billing.received.at(-1)!.url).toBe('/b/invoices')
    // The main token stays the provider's opaque one, for its userinfo (no JWT, no audience).
    const main = await bearerThrough(agent, a, '/api/who')
    expect(() => decodeJwt(main)).toThrow()
    // Kept: the same tokens on both instances, no other request to the provider.
    const before = counters()
    expect(decodeJwt(await bearerThrough(agent, a, '/api/billing/again')).jti).toBe(billing.jti)
    expect(decodeJwt(await bearerThrough(agent, b, '/api/orders/again')).jti).toBe(orders.jti)
    expect(counters().refresh_token).toBe(before.refresh_token)
  })

  it('20 parallel first requests to billing, 10 on each instance, make one token request at the provider', async () => {
    const agent = await signedIn('sale')
    const [a, b] = gateways()
    const before = counters()
    const bearers = await Promise.all(Array.from({ length: 20 }, (_, index) => bearerThrough(agent, index % 2 ? b : a, `/api/billing/first-${index}`)))
    expect(counters().refresh_token - before.refresh_token).toBe(1)
    expect(counters().grant_error - before.grant_error).toBe(0)
    expect(new Set(bearers).size).toBe(1)
    expect(decodeJwt(bearers[0]!)).toMatchObject({ aud: 'http://billing.test', sub: 'u-sale' })
  })

  it('renewals of the main token and of both audiences at once, on both instances: one refresh each, no refresh token used twice, still logged in', async () => {
    const agent = await signedIn('ops')
    const [a, b] = gateways()
    const paths = ['/api/who', '/api/orders/x', '/api/billing/x']
    await Promise.all(paths.map(path => bearerThrough(agent, a, path)))
    // Past each token's renewal margin (a quarter of its 6 s), before its expiry.
    await sleep(4_800)
    const before = counters()
    const bearers = await Promise.all(Array.from({ length: 18 }, (_, index) => bearerThrough(agent, index % 2 ? b : a, paths[index % 3]!)))
    expect(counters().refresh_token - before.refresh_token).toBe(3)
    expect(counters().refresh_token_reuse - before.refresh_token_reuse).toBe(0)
    expect(counters().grant_error - before.grant_error).toBe(0)
    for (const [index] of paths.entries()) expect(new Set(bearers.filter((_, at) => at % 3 === index)).size).toBe(1)
    // The refresh token the session keeps is the newest: the next renewals work too, and the session lives on both.
    await sleep(4_800)
    const again = await Promise.all(paths.flatMap(path => [bearerThrough(agent, a, path), bearerThrough(agent, b, path)]))
    expect(decodeJwt(again[2]!).aud).toBe('http://orders.test')
    expect(decodeJwt(again[5]!).aud).toBe('http://billing.test')
    expect(counters().refresh_token_reuse - before.refresh_token_reuse).toBe(0)
    expect(counters().grant_error - before.grant_error).toBe(0)
    for (const gateway of [a, b]) expect((await (await agent.go(`${gateway}/auth/session`)).json()).user?.id).toBe('u-ops')
  })

  it('a provider that refuses an audience\'s token is 502 for that route only: the other routes and the session work on', async () => {
    const agent = await signedIn('viewer')
    const [a, b] = gateways()
    await bearerThrough(agent, a, '/api/orders/first')
    const received = backends.billing.received.length
    stack.provider.refuseTokenRequests(400, { error: 'invalid_target', error_description: 'resource indicator is missing, or unknown' }, 1)
    const refused = await agent.go(`${b}/api/billing/invoices`)
    expect(refused.status).toBe(502)
    expect(refused.headers.get('content-type')).toMatch(/^application\/json/)
    const refusal = 'Nhà cung cấp định danh (OpenID Provider) không cấp token cho dịch vụ này.'
    expect(await refused.json()).toEqual({ statusCode: 502, statusMessage: refusal, message: refusal })
    expect(backends.billing.received.length).toBe(received)
    expect(decodeJwt(await bearerThrough(agent, b, '/api/orders/still')).aud).toBe('http://orders.test')
    await bearerThrough(agent, b, '/api/who')
    expect((await (await agent.go(`${b}/auth/session`)).json()).user?.id).toBe('u-viewer')
    // The provider serves billing again: the next request gets its token (the refusal kept no refresh token from use).
    expect(decodeJwt(await bearerThrough(agent, a, '/api/billing/invoices')).aud).toBe('http://billing.test')
  })

  it('without a session, an audience route answers 401 before its backend and asks the provider nothing', async () => {
    const [a] = gateways()
    const before = { received: backends.billing.received.length, refreshes: counters().refresh_token }
    const answer = await fetch(`${a}/api/billing/invoices`)
    expect(answer.status).toBe(401)
    const noSession = 'Chưa đăng nhập hoặc phiên đăng nhập đã hết hạn.'
    expect(await answer.json()).toEqual({ statusCode: 401, statusMessage: noSession, message: noSession })
    expect(backends.billing.received.length).toBe(before.received)
    expect(counters().refresh_token).toBe(before.refreshes)
  })

  it('a WebSocket handshake through an audience route carries that audience\'s token', async () => {
    const agent = await signedIn('admin')
    const [a] = gateways()
    const before = backends.live.handshakes.length
    const ws = new WebSocket(`${a.replace(/^http/, 'ws')}/api/live/echo`, { headers: { cookie: `svc_session=${agent.jar.get('svc_session')}`, origin: a } })
    await new Promise((resolve, reject) => {
      ws.once('open', resolve)
      ws.once('error', reject)
      ws.once('unexpected-response', (_request, response) => reject(new Error(`handshake answered ${response.statusCode}`)))
    })
    ws.close()
    const [handshake] = backends.live.handshakes.slice(before)
    expect(decodeJwt(String(handshake!.headers.authorization).replace(/^Bearer /, ''))).toMatchObject({ aud: 'http://orders.test', sub: 'u-admin' })
  })

  it('a route with scope alone gets a token of those scopes; a scope the provider refuses (invalid_scope) is 502 for that route only', async () => {
    const agent = await signedIn('sale')
    const [a, b] = gateways()
    const main = await bearerThrough(agent, a, '/api/who')
    const narrow = await bearerThrough(agent, b, '/api/narrow/x')
    expect(narrow).not.toBe(main)
    const issued = (token: string) => stack.provider.provider.AccessToken.find(token) as Promise<{ scope?: string, accountId?: string } | undefined>
    expect(await issued(narrow)).toMatchObject({ scope: 'openid', accountId: 'u-sale' })
    expect((await issued(main))?.scope).toBe('openid profile email')
    const before = counters()
    const refused = await agent.go(`${a}/api/reports/daily`)
    expect(refused.status).toBe(502)
    expect((await refused.json()).statusMessage).toBe('Nhà cung cấp định danh (OpenID Provider) không cấp token cho dịch vụ này.')
    expect(stack.provider.events.filter(event => event.type === 'grant.error').at(-1)).toMatchObject({ error: 'invalid_scope' })
    // The refusal came before the provider rotated anything: the session and its other routes work on.
    expect(await bearerThrough(agent, b, '/api/narrow/y')).toBe(narrow)
    expect(decodeJwt(await bearerThrough(agent, a, '/api/billing/y')).aud).toBe('http://billing.test')
    expect(counters().refresh_token_reuse - before.refresh_token_reuse).toBe(0)
  })

  it('a route with exchange: true gets its audience\'s token by token exchange (RFC 8693), once, the refresh token unused; a refused exchange is 502 for that route only', async () => {
    const agent = await signedIn('viewer')
    const [a, b] = gateways()
    const before = counters()
    const bearers = await Promise.all(Array.from({ length: 6 }, (_, index) => bearerThrough(agent, index % 2 ? b : a, `/api/exchanged/${index}`)))
    expect(new Set(bearers).size).toBe(1)
    expect(decodeJwt(bearers[0]!)).toMatchObject({ aud: 'http://billing.test', sub: 'u-viewer' })
    expect([counters().token_exchange - before.token_exchange, counters().refresh_token - before.refresh_token]).toEqual([1, 0])

    const other = await signedIn('sale')
    stack.provider.refuseTokenRequests(400, { error: 'invalid_grant', error_description: 'subject token invalid or expired' }, 1)
    const refused = await other.go(`${b}/api/exchanged/x`)
    expect([refused.status, (await refused.json()).statusMessage]).toEqual([502, 'Nhà cung cấp định danh (OpenID Provider) không cấp token cho dịch vụ này.'])
    // The subject token's refusal is not the grant's: the session lives, and the next request gets its token.
    expect((await (await other.go(`${a}/auth/session`)).json()).user?.id).toBe('u-sale')
    expect(decodeJwt(await bearerThrough(other, a, '/api/exchanged/y'))).toMatchObject({ aud: 'http://billing.test', sub: 'u-sale' })
  })
})
