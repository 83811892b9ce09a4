import { beforeAll, describe, expect, it } from 'vitest'
import { freePort, logEntries, type RunningGateway } from '../support/gateway'
import { loginCookie } from '../support/login'
import { rawConnection, rawRequest } from '../support/raw-http'
import { useStack } from '../support/stack'

// GET /auth/verify straight from the tests (the socket is 127.0.0.1, a trusted proxy with APP_TRUST_PROXY=loopback).
// test/e2e/forward-auth.test.ts runs it behind real nginx and Caddy.
const stack = useStack({ gateway: { APP_TRUST_PROXY: 'loopback' } })

const NO_SESSION = { statusCode: 401, statusMessage: 'Chưa đăng nhập hoặc phiên đăng nhập đã hết hạn.' }
const FORBIDDEN = { statusCode: 403, statusMessage: 'Bạn không có quyền truy cập.' }
const navigation = { 'sec-fetch-mode': 'navigate', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'app.example', 'x-forwarded-uri': '/grafana/d/1?from=now-6h&to=now' }

const verify = (gateway: RunningGateway, query = '', headers: Record<string, string> = {}) => rawRequest(`${gateway.url}/auth/verify${query}`, { headers })

describe('GET /auth/verify', () => {
  let admin: string
  let sale: string
  beforeAll(async () => {
    [admin, sale] = await Promise.all([loginCookie(stack.gateway, 'admin', 'admin123'), loginCookie(stack.gateway, 'sale', 'sale123')])
  })

  it('answers 200 with no body and the user\'s headers for a live session, never a cookie or the token', async () => {
    const answer = await verify(stack.gateway, '', { 'cookie': admin, 'x-auth-request-user': 'spoofed' })
    expect(answer.status).toBe(200)
    expect(answer.body).toBe('')
    expect(answer.headers).toMatchObject({ 'x-auth-request-user': 'admin@example.vn', 'x-auth-request-user-id': 'u-admin', 'x-auth-request-email': 'admin@example.vn', 'x-auth-request-roles': 'admin', 'cache-control': 'no-store', 'content-length': '0' })
    expect(answer.headers['set-cookie']).toBeUndefined()
    expect(answer.headers.authorization).toBeUndefined()
  })

  it('answers 401 in the contract\'s form without a session, with a tampered or a planted second cookie', async () => {
    const tampered = `${admin.slice(0, -3)}${admin.endsWith('AAA') ? 'BBB' : 'AAA'}`
    for (const cookie of [undefined, tampered, `${admin}; ${sale}`]) {
      const answer = await verify(stack.gateway, '', cookie ? { cookie } : {})
      expect(answer.status).toBe(401)
      expect(JSON.parse(answer.body)).toMatchObject(NO_SESSION)
      expect(Object.keys(answer.headers).filter(name => name.startsWith('x-auth-request'))).toEqual([])
    }
  })

  it('answers 403 when a permission asked for is missing (permission: all of them; any: one of them)', async () => {
    expect((await verify(stack.gateway, '?permission=/orders/search&permission=/orders/create', { cookie: sale })).status).toBe(200)
    const refused = await verify(stack.gateway, '?permission=/orders/search&permission=/orders/delete', { cookie: sale })
    expect(refused.status).toBe(403)
    expect(JSON.parse(refused.body)).toMatchObject(FORBIDDEN)
    expect(refused.headers['x-auth-request-user']).toBeUndefined()
    expect((await verify(stack.gateway, '?permission=/orders/delete', { cookie: admin })).status).toBe(200)
    expect((await verify(stack.gateway, '?any=/orders/delete&any=/orders/create', { cookie: sale })).status).toBe(200)
    // Only the web permissions are the user's (APP_AUTH_MAPPING_PERMISSION_TYPE): /jobs/report is not one.
    expect((await verify(stack.gateway, '?any=/orders/delete&any=/jobs/report', { cookie: sale })).status).toBe(403)
  })

  it('answers 400 for a query it does not know (a typo never lets everyone in), 405 for other methods, HEAD as GET', async () => {
    // The whole query counts, a second '?' included: /orders/search?x is no permission of hers.
    expect((await verify(stack.gateway, '?permission=/orders/search?x', { cookie: sale })).status).toBe(403)
    const typo = await verify(stack.gateway, '?permision=/orders/delete', { cookie: sale })
    expect(typo.status).toBe(400)
    expect(JSON.parse(typo.body)).toMatchObject({ statusCode: 400, statusMessage: 'Tham số kiểm tra quyền không hợp lệ (chỉ nhận permission và any).' })
    // Another spelling the router takes for the path would hide the query: refused, never a check of nothing.
    for (const spelling of ['/auth/verify%3Fpermission=/orders/delete', '/auth/verify/', '/auth/%76erify?permission=/orders/delete']) {
      const other = await rawRequest(`${stack.gateway.url}${spelling}`, { headers: { cookie: sale } })
      expect(other.status, spelling).toBe(400)
    }
    const post = await rawRequest(`${stack.gateway.url}/auth/verify`, { method: 'DELETE', headers: { cookie: sale } })
    expect(post.status).toBe(405)
    expect(post.headers.allow).toBe('GET, HEAD')
    const head = await rawRequest(`${stack.gateway.url}/auth/verify`, { method: 'HEAD', headers: { cookie: sale } })
    expect(head.status).toBe(200)
    expect(head.headers['x-auth-request-user']).toBe('sale@example.vn')
  })

  it('takes the client\'s own query, carried in by a trusted proxy (Caddy\'s `uri /auth/verify`), as asking for nothing', async () => {
    const carried = { 'cookie': sale, 'x-forwarded-method': 'GET', 'x-forwarded-uri': '/grafana/d/x?orgId=1&tab=panel' }
    const answer = await verify(stack.gateway, '?orgId=1&tab=panel', carried)
    expect(answer.status).toBe(200)
    expect(answer.headers['x-auth-request-user']).toBe('sale@example.vn')
    // A query of the check's own address is read as ever: a typo is refused, whatever the client asked for...
    expect((await verify(stack.gateway, '?permision=/orders/delete', carried)).status).toBe(400)
    // ...and when the client copies the typo into its own URL, so that both are the same.
    const copied = { ...carried, 'x-forwarded-uri': '/grafana/d/x?permision=/orders/delete' }
    expect((await verify(stack.gateway, '?permision=/orders/delete', copied)).status).toBe(400)
    expect((await verify(stack.gateway, '?permission=/orders/delete', carried)).status).toBe(403)
  })

  it('still asks for the permission of its own query when the client\'s URL carries the same query (no way in by naming it)', async () => {
    // nginx: `auth_request` to /auth/verify?permission=/orders/delete, the client asking /admin/?permission=/orders/delete.
    const named = { 'cookie': sale, 'x-forwarded-method': 'GET', 'x-forwarded-uri': '/admin/?permission=/orders/delete' }
    expect((await verify(stack.gateway, '?permission=/orders/delete', named)).status).toBe(403)
    expect((await verify(stack.gateway, '?permission=%2Forders%2Fdelete', { ...named, 'x-forwarded-uri': '/admin/?permission=%2Forders%2Fdelete' })).status).toBe(403)
  })

  it('sends a browser navigation a trusted proxy passed on to the login page, with the URL it asked for', async () => {
    const answer = await verify(stack.gateway, '', navigation)
    expect(answer.status).toBe(302)
    expect(answer.headers.location).toBe('/auth/login?redirect=%2Fgrafana%2Fd%2F1%3Ffrom%3Dnow-6h%26to%3Dnow')
    expect(answer.body).toBe('')
    // A script's request, or a POST, is told 401.
    expect((await verify(stack.gateway, '', { ...navigation, 'sec-fetch-mode': 'cors' })).status).toBe(401)
    expect((await verify(stack.gateway, '', { ...navigation, 'x-forwarded-method': 'POST' })).status).toBe(401)
    // A repeated X-Forwarded-Uri is not believed (Node would join the two).
    const { socket, received } = rawConnection(stack.gateway.port)
    socket.write('GET /auth/verify HTTP/1.1\r\nHost: gw\r\nSec-Fetch-Mode: navigate\r\nX-Forwarded-Proto: https\r\nX-Forwarded-Host: app.example\r\n'
      + 'X-Forwarded-Uri: /a\r\nX-Forwarded-Uri: /b\r\nConnection: close\r\n\r\n')
    await expect.poll(received).toMatch(/^HTTP\/1\.1 401 /)
    // Elsewhere than the request's own origin: home, unless APP_TRUSTED_ORIGINS lists it.
    expect((await verify(stack.gateway, '', { ...navigation, 'x-forwarded-uri': 'https://evil.example/x' })).headers.location).toBe('/auth/login?redirect=%2F')
  })

  it('refuses a session whose IAM token has expired (401), as the proxy sends it no token', async () => {
    const cookie = await loginCookie(stack.gateway, 'short-lived', 'short123')
    expect((await verify(stack.gateway, '', { cookie })).status).toBe(200)
    // Wait for the condition: the session's end that the gateway itself reports has passed.
    const { expiresAt } = JSON.parse((await rawRequest(`${stack.gateway.url}/auth/session`, { headers: { cookie } })).body) as { expiresAt: number }
    await new Promise(resolve => setTimeout(resolve, Math.max(0, expiresAt - Date.now()) + 20))
    const answer = await verify(stack.gateway, '', { cookie })
    expect(answer.status).toBe(401)
    expect(JSON.parse(answer.body)).toMatchObject(NO_SESSION)
    expect(answer.headers['x-auth-request-user']).toBeUndefined()
  })

  it('believes X-Forwarded-* only from a trusted proxy: from any other peer a navigation is 401', async () => {
    const untrusted = await stack.gatewayWith({ APP_TRUST_PROXY: '10.0.0.0/8' })
    const answer = await verify(untrusted, '', navigation)
    expect(answer.status).toBe(401)
    expect(answer.headers.location).toBeUndefined()
    // Nor is a query the client's because such a peer says so.
    const cookie = await loginCookie(untrusted, 'sale', 'sale123')
    expect((await verify(untrusted, '?orgId=1', { cookie, 'x-forwarded-uri': '/grafana/d/x?orgId=1' })).status).toBe(400)
  })

  it('goes to an origin of APP_TRUSTED_ORIGINS by its whole URL', async () => {
    const gateway = await stack.gatewayWith({ APP_TRUST_PROXY: 'loopback', APP_TRUSTED_ORIGINS: 'https://partner.example' })
    const answer = await verify(gateway, '', { ...navigation, 'x-forwarded-uri': 'https://partner.example/r?id=7' })
    expect(answer.headers.location).toBe(`/auth/login?redirect=${encodeURIComponent('https://partner.example/r?id=7')}`)
    // Whole origins: a longer name, another port or scheme is another site (home).
    for (const uri of ['https://partner.example.evil.test/r', 'https://partner.example:8443/r', 'http://partner.example/r']) {
      expect((await verify(gateway, '', { ...navigation, 'x-forwarded-uri': uri })).headers.location).toBe('/auth/login?redirect=%2F')
    }
  })

  it('hands the IAM token on only with APP_VERIFY_PASS_TOKEN=true', async () => {
    const gateway = await stack.gatewayWith({ APP_TRUST_PROXY: 'loopback', APP_VERIFY_PASS_TOKEN: 'true' })
    const cookie = await loginCookie(gateway, 'viewer', 'viewer123')
    const answer = await verify(gateway, '', { cookie })
    expect(answer.status).toBe(200)
    // The same token the /api proxy sends to the backend.
    const seen = JSON.parse((await rawRequest(`${gateway.url}/api/who`, { headers: { cookie } })).body).headers
    expect(answer.headers.authorization).toBe(seen.authorization)
    expect(answer.headers.authorization).toMatch(/^Bearer .{100,}/)
    // To a trusted proxy alone: asked by any other peer (a browser's script reaching the gateway), the token stays.
    const direct = await stack.gatewayWith({ APP_VERIFY_PASS_TOKEN: 'true' })
    const directCookie = await loginCookie(direct, 'viewer', 'viewer123')
    const untrusted = await verify(direct, '', { cookie: directCookie })
    expect(untrusted.status).toBe(200)
    expect(untrusted.headers.authorization).toBeUndefined()
  })

  it('never lets a client\'s X-Auth-Request-* or X-Forwarded-Uri reach an /api backend', async () => {
    const spoofed = { 'x-auth-request-user': 'boss@example.vn', 'x-auth-request-user-id': 'u-boss', 'x-auth-request-email': 'boss@example.vn', 'x-auth-request-roles': 'admin', 'x-forwarded-uri': '/x', 'x-forwarded-method': 'GET' }
    const seen = JSON.parse((await rawRequest(`${stack.gateway.url}/api/who`, { headers: { cookie: admin, ...spoofed } })).body).headers
    expect(Object.keys(seen).filter(name => name.startsWith('x-auth-request') || name === 'x-forwarded-uri' || name === 'x-forwarded-method')).toEqual([])
  })

  it('refuses the session at once after its logout, and logs and counts each check as group verify', async () => {
    const metricsPort = await freePort()
    const gateway = await stack.gatewayWith({ APP_TRUST_PROXY: 'loopback', APP_METRICS_PORT: String(metricsPort), APP_METRICS_HOST: '127.0.0.1' })
    const cookie = await loginCookie(gateway, 'viewer', 'viewer123')
    expect((await verify(gateway, '', { cookie })).status).toBe(200)
    expect((await rawRequest(`${gateway.url}/auth/logout`, { headers: { cookie } })).status).toBe(302)
    expect((await verify(gateway, '', { cookie })).status).toBe(401)
    await expect.poll(() => logEntries(gateway.stdout()).filter(line => line.type === 'access' && line.group === 'verify').map(line => line.status)).toEqual([200, 401])
    const metrics = (await rawRequest(`http://127.0.0.1:${metricsPort}/metrics`)).body
    expect(metrics).toContain('svc_gateway_requests_total{group="verify",method="GET",status_class="2xx"} 1')
    expect(metrics).toContain('svc_gateway_requests_total{group="verify",method="GET",status_class="4xx"} 1')
  })
})
