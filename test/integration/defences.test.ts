import { beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { findSetCookie, type RunningGateway } from '../support/gateway'
import { sessionCookieOf } from '../support/login'
import { rawRequest } from '../support/raw-http'
import { waitForClients } from '../support/redis'
import { useStack } from '../support/stack'

const CROSS_ORIGIN = 'Yêu cầu khác nguồn gốc bị từ chối.'
const TOO_MANY = /^Bạn đã thử quá nhiều lần\. Vui lòng thử lại sau (\d+) giây\.$/

const stack = useStack()

const loginBody = (username: string, password: string) => JSON.stringify({ username, password })

function login(gateway: RunningGateway, username: string, password: string, headers: Record<string, string> = {}) {
  return rawRequest(`${gateway.url}/auth/login`, { method: 'POST', body: loginBody(username, password), headers: { 'content-type': 'application/json', ...headers } })
}

describe('cross-origin protection', () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await stack.gatewayWith({ APP_TRUSTED_ORIGINS: 'http://partner.test:8080, https://partner.example' })
  })

  it.each([
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site', 'origin': 'http://evil.test' }],
    ['Sec-Fetch-Site: same-site', { 'sec-fetch-site': 'same-site', 'origin': 'http://127.0.0.1:1' }],
    ['a foreign Origin without Sec-Fetch-Site', { origin: 'http://evil.test' }],
    ['Origin on another port', { origin: 'http://127.0.0.1:1' }],
    ['Origin null', { origin: 'null' }],
    // APP_TRUSTED_ORIGINS lists whole origins: a longer name or another port is another site.
    ['a trusted origin\'s name followed by another domain', { 'sec-fetch-site': 'cross-site', 'origin': 'https://partner.example.evil.test' }],
    ['a trusted origin\'s host on another port, without Sec-Fetch-Site', { origin: 'https://partner.example:8443' }],
  ])('refuses POST /auth/login and POST /api/** with %s: 403, and neither IAM nor backend hears of it', async (_name, headers) => {
    const iamBefore = stack.iam.requests.length
    const echoBefore = stack.echo.received.length
    const refused = await login(gateway, 'viewer', 'viewer123', headers)
    expect(refused.status).toBe(403)
    expect(JSON.parse(refused.body)).toMatchObject({ statusCode: 403, statusMessage: CROSS_ORIGIN })
    const proxied = await rawRequest(`${gateway.url}/api/transfer`, { method: 'POST', body: '{}', headers })
    expect(proxied.status).toBe(403)
    expect(JSON.parse(proxied.body)).toMatchObject({ statusCode: 403, statusMessage: CROSS_ORIGIN })
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      expect((await rawRequest(`${gateway.url}/api/transfer`, { method, headers })).status).toBe(403)
    }
    expect((await rawRequest(`${gateway.url}/auth/otp/send`, { method: 'POST', body: loginBody('a', 'b'), headers })).status).toBe(403)
    expect(stack.iam.requests.length).toBe(iamBefore)
    expect(stack.echo.received.length).toBe(echoBefore)
  })

  it.each([
    ['no Origin and no Sec-Fetch-Site (curl)', {}],
    ['Sec-Fetch-Site: same-origin', { 'sec-fetch-site': 'same-origin' }],
    ['Sec-Fetch-Site: none', { 'sec-fetch-site': 'none' }],
    ['the same host as Origin', { origin: 'http://127.0.0.1:PORT' }],
    ['a trusted origin', { 'sec-fetch-site': 'cross-site', 'origin': 'http://partner.test:8080' }],
  ])('lets through unsafe requests with %s', async (_name, headers) => {
    const fixed = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v.replace('PORT', String(gateway.port))]))
    expect((await login(gateway, 'viewer', 'viewer123', fixed)).status).toBe(200)
    expect((await rawRequest(`${gateway.url}/api/transfer`, { method: 'POST', body: '{}', headers: fixed })).status).toBe(200)
  })

  it('never blocks safe methods', async () => {
    const headers = { 'sec-fetch-site': 'cross-site', 'origin': 'http://evil.test' }
    expect((await rawRequest(`${gateway.url}/api/list`, { headers })).status).toBe(200)
    expect((await rawRequest(`${gateway.url}/auth/session`, { headers })).status).toBe(200)
    // A cross-site navigation to /auth/logout is answered with a question, not a logout (see 'logout' below).
    expect((await rawRequest(`${gateway.url}/auth/logout`, { headers })).status).toBe(200)
  })
})

describe('brute-force limits (memory counters)', () => {
  // A fresh gateway (fresh counters) for each test, rather than waiting for the last test's window to end.
  let gateway: RunningGateway
  beforeEach(async () => {
    gateway = await stack.gatewayWith({ APP_RATE_LIMIT_PER_USER: '3', APP_RATE_LIMIT_PER_IP: '8', APP_RATE_LIMIT_WINDOW: '3' })
  })

  it('answers 429 with Retry-After past the limit, before calling the IAM, and recovers after the window', async () => {
    for (let i = 0; i < 3; i++) expect((await login(gateway, 'Sale', 'wrong')).status).toBe(401)
    const before = stack.iam.requests.length
    const limited = await login(gateway, 'sale', 'sale123') // the username is case-folded
    expect(limited.status).toBe(429)
    const message = JSON.parse(limited.body).statusMessage as string
    expect(message).toMatch(TOO_MANY)
    const seconds = Number(TOO_MANY.exec(message)![1])
    expect(limited.headers['retry-after']).toBe(String(seconds))
    expect(seconds).toBeGreaterThanOrEqual(1)
    expect(seconds).toBeLessThanOrEqual(3)
    expect(stack.iam.requests.length).toBe(before)
    // Another user from the same address is not held back by this one.
    expect((await login(gateway, 'viewer', 'viewer123')).status).toBe(200)
    // Limited attempts count nothing: ask until the window has ended, then the login goes through.
    const limitedSince = Date.now()
    await expect.poll(async () => (await login(gateway, 'sale', 'sale123')).status, { timeout: 5_000, interval: 200 }).toBe(200)
    expect(Date.now() - limitedSince).toBeLessThanOrEqual(seconds * 1000 + 500)
  })

  it('counts a burst of parallel attempts before any finishes', async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, () => login(gateway, 'admin', 'wrong')))
    const statuses = answers.map(answer => answer.status).sort()
    expect(statuses.filter(status => status === 401)).toHaveLength(3)
    expect(statuses.filter(status => status === 429)).toHaveLength(7)
  })

  it('does not count what is not an IAM refusal (400), and an accepted login clears the user count', async () => {
    for (let i = 0; i < 5; i++) expect((await login(gateway, 'viewer', '')).status).toBe(400)
    expect((await login(gateway, 'viewer', 'x')).status).toBe(401)
    expect((await login(gateway, 'viewer', 'x')).status).toBe(401)
    expect((await login(gateway, 'viewer', 'viewer123')).status).toBe(200)
    for (let i = 0; i < 3; i++) expect((await login(gateway, 'viewer', 'x')).status).toBe(401)
    expect((await login(gateway, 'viewer', 'x')).status).toBe(429)
  })

  it('applies to POST /auth/otp/send too, sharing the counts', async () => {
    const send = () => rawRequest(`${gateway.url}/auth/otp/send`, { method: 'POST', body: loginBody('otp.sms', 'bad'), headers: { 'content-type': 'application/json' } })
    for (let i = 0; i < 3; i++) expect((await send()).status).toBe(401)
    expect((await send()).status).toBe(429)
    expect((await login(gateway, 'otp.sms', 'otp123')).status).toBe(429)
  })
})

describe('behind a reverse proxy (APP_TRUST_PROXY)', () => {
  it('takes the client address from X-Forwarded-For for the limits and the proxy, and believes X-Forwarded-Host', async () => {
    const gateway = await stack.gatewayWith({ APP_TRUST_PROXY: 'true', APP_RATE_LIMIT_PER_USER: '2' })
    const from = (ip: string) => ({ 'x-forwarded-for': `${ip}` })
    for (let i = 0; i < 2; i++) expect((await login(gateway, 'admin', 'x', from('203.0.113.7'))).status).toBe(401)
    expect((await login(gateway, 'admin', 'x', from('203.0.113.7'))).status).toBe(429)
    expect((await login(gateway, 'admin', 'x', from('198.51.100.9'))).status).toBe(401)

    const answer = await rawRequest(`${gateway.url}/api/who`, { headers: { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-host': 'app.example', 'x-forwarded-proto': 'https' } })
    const seen = JSON.parse(answer.body).headers
    expect(seen['x-forwarded-for']).toBe('203.0.113.7, 127.0.0.1')
    expect(seen['x-forwarded-host']).toBe('app.example')
    expect(seen['x-forwarded-proto']).toBe('https')
    // The Origin check compares with the believed X-Forwarded-Host.
    const post = await rawRequest(`${gateway.url}/api/who`, { method: 'POST', body: '{}', headers: { 'x-forwarded-host': 'app.example', 'origin': 'https://app.example' } })
    expect(post.status).toBe(200)
  })

  it('believes X-Forwarded-* only from a peer in the APP_TRUST_PROXY list', async () => {
    const headers = { 'x-forwarded-for': '6.6.6.6, 203.0.113.7', 'x-forwarded-host': 'app.example', 'x-forwarded-proto': 'https' }
    const [untrusted, trusted] = await Promise.all([stack.gatewayWith({ APP_TRUST_PROXY: '10.0.0.0/8, 192.168.0.0/16' }), stack.gatewayWith({ APP_TRUST_PROXY: 'loopback' })])
    const seenBy = async (gateway: typeof trusted) => JSON.parse((await rawRequest(`${gateway.url}/api/who`, { headers })).body).headers
    // The tests' socket is 127.0.0.1: not in the first list, so nothing it says is believed.
    expect(await seenBy(untrusted)).toMatchObject({ 'x-forwarded-for': '127.0.0.1', 'x-forwarded-host': `127.0.0.1:${untrusted.port}`, 'x-forwarded-proto': 'http', 'x-real-ip': '127.0.0.1' })
    // Loopback is trusted in the second, and 203.0.113.7 is not: it is the client.
    expect(await seenBy(trusted)).toMatchObject({ 'x-forwarded-for': '6.6.6.6, 203.0.113.7, 127.0.0.1', 'x-forwarded-host': 'app.example', 'x-forwarded-proto': 'https', 'x-real-ip': '203.0.113.7' })
  })

  it('sends a browser\'s traceparent and tracestate on only with APP_OTEL_TRUST_INCOMING=true, tracing off too', async () => {
    const headers = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'vendor=chosen' }
    const [untrusting, trusting] = await Promise.all([stack.gatewayWith(), stack.gatewayWith({ APP_OTEL_TRUST_INCOMING: 'true' })])
    const seenBy = async (gateway: typeof trusting) => JSON.parse((await rawRequest(`${gateway.url}/api/who`, { headers })).body).headers
    const untrusted = await seenBy(untrusting)
    expect([untrusted.traceparent, untrusted.tracestate]).toEqual([undefined, undefined])
    expect(await seenBy(trusting)).toMatchObject(headers)
  })

  it('ignores X-Forwarded-* without APP_TRUST_PROXY', async () => {
    const gateway = await stack.gatewayWith()
    const answer = await rawRequest(`${gateway.url}/api/who`, { headers: { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-host': 'evil.example' } })
    const seen = JSON.parse(answer.body).headers
    expect(seen['x-forwarded-for']).toBe('127.0.0.1')
    expect(seen['x-forwarded-host']).toBe(`127.0.0.1:${gateway.port}`)
  })
})

describe('two instances sharing the secret and Redis', () => {
  it('accept each other\'s cookies, share the counts, and keep serving when Redis stops', async () => {
    const redis = await stack.redisServer()
    try {
      const env = { APP_REDIS_URL: redis.url, APP_RATE_LIMIT_PER_USER: '3', APP_RATE_LIMIT_WINDOW: '60' }
      const [first, second] = await Promise.all([stack.gatewayWith(env), stack.gatewayWith(env)])
      await waitForClients(redis.url, 2 * 3) // each instance: the limiter's connection and the revocations' two

      const accepted = await login(first, 'sale', 'sale123')
      const cookie = sessionCookieOf(accepted)
      const session = await fetch(`${second.url}/auth/session`, { headers: { cookie } })
      expect((await session.json()).user.id).toBe('u-sale')

      expect((await login(first, 'viewer', 'bad')).status).toBe(401)
      expect((await login(second, 'viewer', 'bad')).status).toBe(401)
      expect((await login(first, 'viewer', 'bad')).status).toBe(401)
      expect((await login(second, 'viewer', 'viewer123')).status).toBe(429)
      expect((await login(first, 'viewer', 'viewer123')).status).toBe(429)

      await redis.stop()
      const started = Date.now()
      const afterOutage = await login(second, 'admin', 'admin123')
      expect(afterOutage.status).toBe(200)
      expect(Date.now() - started).toBeLessThan(1_500)
      expect(findSetCookie(await fetch(`${first.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: loginBody('admin', 'admin123') }), 'svc_session')).toBeDefined()
      await expect.poll(() => first.output() + second.output()).toMatch(/Redis không dùng được/)
    }
    finally {
      await redis.stop()
    }
  })
})
