import { once } from 'node:events'
import { createServer, type AddressInfo } from 'node:net'
import { beforeAll, describe, expect, it } from 'vitest'
import { deriveSealKeys, unsealSession } from '../../server/core/session/seal'
import { cookiePair, findSetCookie, freePort, logEntries, runGatewayToExit, TEST_SECRET, type RunningGateway } from '../support/gateway'
import { useStack } from '../support/stack'

const PLACEHOLDER_SECRET = 'change-me-to-64-hex-characters-from-openssl-rand-hex-32-000000'

const MOCK_USER = {
  id: 'mock-user',
  name: 'Người dùng alice',
  email: 'alice@mock.local',
  roles: ['admin'],
  permissions: ['/orders/search', '/orders/create', '/orders/update'],
}

// Gateways here start from their own variables alone: nothing of the IAM or backend is given unless a test says so.
const stack = useStack({ backend: 'none' })

function post(gateway: RunningGateway, path: string, body: unknown) {
  return fetch(gateway.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
}

describe('mock mode (APP_AUTH_MOCK=true), no IAM at all', () => {
  let mock: RunningGateway
  beforeAll(async () => {
    mock = await stack.bareGateway({ APP_AUTH_MOCK: 'true' })
  })

  it('accepts any account and answers the mock user; the cookie holds the whole user and no token', async () => {
    const response = await post(mock, '/auth/login', { username: ' alice ', password: 'anything' })
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ user: MOCK_USER })
    const cookie = findSetCookie(response, 'svc_session')!
    const payload = unsealSession(cookiePair(cookie).split('=')[1], deriveSealKeys([TEST_SECRET], 'session-mock'))
    expect(payload?.user).toEqual(MOCK_USER)
    expect(payload).not.toHaveProperty('accessToken')
    expect(unsealSession(cookiePair(cookie).split('=')[1], deriveSealKeys([TEST_SECRET], 'session'))).toBeNull()

    const session = await fetch(`${mock.url}/auth/session`, { headers: { cookie: cookiePair(cookie) } })
    expect(await session.json()).toEqual({ user: MOCK_USER, expiresAt: expect.any(Number) })
  })

  it('still validates first: 400 without a password', async () => {
    const response = await post(mock, '/auth/login', { username: 'alice' })
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ statusCode: 400, statusMessage: 'Thiếu tên đăng nhập hoặc mật khẩu.' })
  })

  it('lists the two sample applications and sends OTP as mock-transaction', async () => {
    expect(await (await fetch(`${mock.url}/auth/clients`)).json()).toEqual({
      clients: [
        { id: 'mock-1', code: 'MOCK_APP_1', name: 'Ứng dụng mẫu 1' },
        { id: 'mock-2', code: 'MOCK_APP_2', name: 'Ứng dụng mẫu 2' },
      ],
    })
    expect(await (await post(mock, '/auth/otp/send', { username: 'a', password: 'b' })).json()).toEqual({ transactionId: 'mock-transaction' })
  })

  it('answers 500 on /api/** without APP_API_PROXY_TARGET, with the contract message as JSON whatever Accept says', async () => {
    const response = await fetch(`${mock.url}/api/orders`, { headers: { accept: 'text/html' } })
    expect(response.status).toBe(500)
    expect(response.statusText).toBe('Internal Server Error')
    expect(await response.json()).toMatchObject({ statusCode: 500, statusMessage: 'apiProxyTarget chưa cấu hình.' })
  })

  it('says at start, once, that anyone logs in (a built server in mock mode is a demo or a test)', async () => {
    await expect.poll(() => logEntries(mock.stdout()).filter(entry => entry.level === 'warn' && String(entry.msg).startsWith('APP_AUTH_MOCK=true:')).length).toBe(1)
  })

  it('logs in as the user of APP_AUTH_MOCK_USER, its fields over the contract\'s', async () => {
    // The README's example.
    const own = await stack.bareGateway({ APP_AUTH_MOCK: 'true', APP_AUTH_MOCK_USER: '{"name":"Lê Kế Toán","roles":["accountant"],"permissions":["/invoices/search"]}' })
    const response = await post(own, '/auth/login', { username: 'alice', password: 'x' })
    const user = { id: 'mock-user', name: 'Lê Kế Toán', email: 'alice@mock.local', roles: ['accountant'], permissions: ['/invoices/search'] }
    expect(await response.json()).toEqual({ user })
    const cookie = cookiePair(findSetCookie(response, 'svc_session')!)
    expect(await (await fetch(`${own.url}/auth/session`, { headers: { cookie } })).json()).toEqual({ user, expiresAt: expect.any(Number) })
  })

  it('keeps every permission of a mock user too large for the cookie: /auth/session and forward auth read them from the configuration', async () => {
    const permissions = Array.from({ length: 150 }, (_, index) => `/invoices/area-${index}/search`)
    const large = await stack.bareGateway({ APP_AUTH_MOCK: 'true', APP_AUTH_MOCK_USER: JSON.stringify({ permissions }) })
    const response = await post(large, '/auth/login', { username: 'alice', password: 'x' })
    expect((await response.json()).user.permissions).toEqual(permissions)
    const cookie = cookiePair(findSetCookie(response, 'svc_session')!)
    // The cookie's copy dropped them to fit 4 KB (the log says so, naming where they are read again).
    await expect.poll(() => logEntries(large.stdout()).some(entry => String(entry.msg).includes('(đọc lại từ APP_AUTH_MOCK_USER)'))).toBe(true)
    expect((await (await fetch(`${large.url}/auth/session`, { headers: { cookie } })).json()).user.permissions).toEqual(permissions)
    const verify = await fetch(`${large.url}/auth/verify?permission=${encodeURIComponent(permissions.at(-1)!)}`, { headers: { cookie } })
    expect(verify.status).toBe(200)
  })

  it('accepts APP_AUTH_MOCK=1 as well; a mock cookie is no session for a real gateway sharing the secret', async () => {
    const numeric = await stack.bareGateway({ APP_AUTH_MOCK: '1' })
    const response = await post(numeric, '/auth/login', { username: 'alice', password: 'x' })
    expect(response.status).toBe(200)
    const cookie = cookiePair(findSetCookie(response, 'svc_session')!)
    const real = await stack.bareGateway({ APP_AUTH_BASE_URL: stack.iam.url })
    expect(await (await fetch(`${real.url}/auth/session`, { headers: { cookie } })).json()).toEqual({ user: null, expiresAt: null })
  })
})

describe('configuration read at start', () => {
  it('leaves the app\'s own runtime config to its NUXT_* variables, and reads the gateway\'s from APP_*', async () => {
    const gateway = await stack.bareGateway({ APP_AUTH_MOCK: 'true', NUXT_PUBLIC_APP_NAME: 'Kho hàng miền Nam', APP_PUBLIC_APP_NAME: 'Sai' })
    const login = await post(gateway, '/auth/login', { username: 'alice', password: 'x' })
    expect(login.status).toBe(200)
    const page = await fetch(`${gateway.url}/`, { headers: { cookie: cookiePair(findSetCookie(login, 'svc_session')!) } })
    const html = await page.text()
    expect(html).toContain('◆ Kho hàng miền Nam')
    expect(html).not.toContain('Sai')
  })

  it('answers the contract 500 on IAM routes when APP_AUTH_BASE_URL is missing and mock is off', async () => {
    const gateway = await stack.bareGateway({})
    for (const [path, body] of [['/auth/login', { username: 'a', password: 'b' }], ['/auth/otp/send', { username: 'a', password: 'b' }]] as const) {
      const response = await post(gateway, path, body)
      expect(response.status).toBe(500)
      expect(await response.json()).toMatchObject({ statusCode: 500, statusMessage: 'auth.baseURL chưa cấu hình (APP_AUTH_BASE_URL).' })
    }
    const clients = await fetch(`${gateway.url}/auth/clients`)
    expect(clients.status).toBe(500)
    expect(await clients.json()).toMatchObject({ statusMessage: 'auth.baseURL chưa cấu hình (APP_AUTH_BASE_URL).' })
    expect(await (await fetch(`${gateway.url}/auth/session`)).json()).toEqual({ user: null, expiresAt: null })
  })

  it('names each required setting that is missing in an error line at start, and keeps /readyz at 503 naming them', async () => {
    const gateway = await stack.bareGateway({})
    expect(logEntries(gateway.stdout()).filter(entry => entry.type === 'config').map(({ level, missing, msg }) => ({ level, missing, msg }))).toEqual([
      { level: 'error', missing: 'APP_AUTH_BASE_URL', msg: 'thiếu cấu hình APP_AUTH_BASE_URL: không ai đăng nhập được (500 ở /auth/login), /readyz trả 503. Đặt địa chỉ IAM, hoặc APP_AUTH_MOCK=true.' },
      { level: 'error', missing: 'APP_API_PROXY_TARGET', msg: 'thiếu cấu hình APP_API_PROXY_TARGET: /api/** trả 500, /readyz trả 503. Đặt địa chỉ backend, hoặc APP_API_PROXY=false cho gateway không có backend (chỉ forward auth).' },
    ])
    const ready = await fetch(`${gateway.url}/readyz`)
    expect(ready.status).toBe(503)
    expect(await ready.json()).toEqual({
      status: 'not ready',
      checks: { config: { missing: ['APP_AUTH_BASE_URL', 'APP_API_PROXY_TARGET'] }, redis: 'not configured', iam: 'not configured', backend: 'not configured', backendPool: 'ok' },
    })
    // The contract's 500s stay what a request gets.
    expect(await (await post(gateway, '/auth/login', { username: 'a', password: 'b' })).json()).toMatchObject({ statusCode: 500, statusMessage: 'auth.baseURL chưa cấu hình (APP_AUTH_BASE_URL).' })
    expect(await (await fetch(`${gateway.url}/api/orders`)).json()).toMatchObject({ statusCode: 500, statusMessage: 'apiProxyTarget chưa cấu hình.' })

    // Mock mode needs no IAM; a gateway without a backend says so with APP_API_PROXY=false.
    const complete = await stack.bareGateway({ APP_AUTH_MOCK: 'true', APP_API_PROXY: 'false' })
    const readyNow = await fetch(`${complete.url}/readyz`)
    expect(readyNow.status).toBe(200)
    expect(await readyNow.json()).toEqual({ status: 'ready', checks: { config: 'ok', redis: 'not configured', iam: 'mock', backend: 'not configured', backendPool: 'ok' } })
    // No setting missing; mock mode's own warning is the one config line.
    expect(logEntries(complete.stdout()).filter(entry => entry.type === 'config').map(entry => entry.level)).toEqual(['warn'])
    expect((await fetch(`${complete.url}/api/orders`)).status).toBe(500)
  })

  it('follows the endpoint, mapping and OTP-method variables', async () => {
    const gateway = await stack.bareGateway({
      APP_AUTH_BASE_URL: stack.iam.url,
      APP_AUTH_ENDPOINTS_OTP_SEND: '',
      APP_AUTH_ENDPOINTS_CLIENTS: '',
      APP_AUTH_MAPPING_PERMISSION_TYPE: '',
      APP_AUTH_AUTHEN_METHOD_AUTHENTICATOR: 'TOTP',
    })
    const otp = await post(gateway, '/auth/otp/send', { username: 'otp.sms', password: 'otp123' })
    expect(otp.status).toBe(400)
    expect(await otp.json()).toMatchObject({ statusCode: 400, statusMessage: 'Chưa cấu hình gửi OTP (auth.endpoints.otpSend).' })
    expect(await (await fetch(`${gateway.url}/auth/clients`)).json()).toEqual({ clients: [] })

    const login = await post(gateway, '/auth/login', { username: 'admin', password: 'admin123' })
    expect((await login.json()).user.permissions).toEqual(['/orders/search', '/orders/create', '/orders/update', '/orders/delete', '/jobs/sync'])

    await post(gateway, '/auth/login', { username: 'otp.app', password: 'otp123', method: 'authenticator', otp: '1' })
    expect(stack.iam.requests.filter(r => r.path === '/auth/auth/login-v1').at(-1)!.body.authenMethod).toBe('TOTP')
  })

  it('answers 502 when the IAM cannot be reached', async () => {
    const gateway = await stack.bareGateway({ APP_AUTH_BASE_URL: `http://127.0.0.1:${await freePort()}` })
    const response = await post(gateway, '/auth/login', { username: 'a', password: 'b' })
    expect(response.status).toBe(502)
    expect(await response.json()).toMatchObject({ statusCode: 502, statusMessage: 'Không kết nối được IAM.' })
    expect(await (await fetch(`${gateway.url}/auth/clients`)).json()).toEqual({ clients: [] })
  })

  it('accepts cookies sealed with a previous secret after rotation', async () => {
    const before = await stack.bareGateway({ APP_AUTH_MOCK: 'true', APP_SESSION_SECRET: 'first-secret-0123456789abcdef0123456789' })
    const cookie = cookiePair(findSetCookie(await post(before, '/auth/login', { username: 'alice', password: 'x' }), 'svc_session')!)
    const after = await stack.bareGateway({
      APP_AUTH_MOCK: 'true',
      APP_SESSION_SECRET: 'second-secret-0123456789abcdef012345678',
      APP_SESSION_SECRET_PREVIOUS: 'first-secret-0123456789abcdef0123456789',
    })
    expect(await (await fetch(`${after.url}/auth/session`, { headers: { cookie } })).json()).toEqual({ user: MOCK_USER, expiresAt: expect.any(Number) })
    const stranger = await stack.bareGateway({ APP_AUTH_MOCK: 'true', APP_SESSION_SECRET: 'second-secret-0123456789abcdef012345678' })
    expect(await (await fetch(`${stranger.url}/auth/session`, { headers: { cookie } })).json()).toEqual({ user: null, expiresAt: null })
  })

  it.each([
    [{ APP_SESSION_SECRET: '' }, /APP_SESSION_SECRET/],
    [{ APP_SESSION_SECRET: 'too-short' }, /APP_SESSION_SECRET.*32/],
    [{ APP_SESSION_SECRET: 'x'.repeat(16) }, /APP_SESSION_SECRET quá ngắn: cần ít nhất 32 ký tự/],
    [{ APP_SESSION_SECRET: 'x'.repeat(31) }, /APP_SESSION_SECRET quá ngắn: cần ít nhất 32 ký tự/],
    // deploy/kubernetes-secret.yaml's placeholder, left as it is.
    [{ APP_SESSION_SECRET: PLACEHOLDER_SECRET }, /APP_SESSION_SECRET là giá trị mẫu của tài liệu, ai cũng biết: tạo khoá riêng \(openssl rand -hex 32\)\./],
    [{ APP_SESSION_SECRET: TEST_SECRET, APP_SESSION_SECRET_PREVIOUS: PLACEHOLDER_SECRET }, /APP_SESSION_SECRET_PREVIOUS là giá trị mẫu của tài liệu/],
    [{ APP_SESSION_SECRET: TEST_SECRET, APP_AUTH_MOCK: 'maybe' }, /APP_AUTH_MOCK/],
    [{ APP_SESSION_SECRET: TEST_SECRET, APP_AUTH_BASE_URL: 'iam.local' }, /APP_AUTH_BASE_URL/],
    [{ APP_SESSION_SECRET: TEST_SECRET, APP_RATE_LIMIT_PER_USER: 'five' }, /APP_RATE_LIMIT_PER_USER phải là số nguyên >= 0 \(nhận được 'five'\)/],
    [{ APP_SESSION_SECRET: TEST_SECRET, APP_RATE_LIMIT_PER_IP: '-1' }, /APP_RATE_LIMIT_PER_IP phải là số nguyên >= 0/],
    [{ APP_SESSION_SECRET: TEST_SECRET, APP_RATE_LIMIT_WINDOW: '0' }, /APP_RATE_LIMIT_WINDOW phải là số nguyên >= 1/],
    [{ APP_SESSION_SECRET: TEST_SECRET, APP_RATE_LIMIT_MAX_KEYS: '10' }, /APP_RATE_LIMIT_MAX_KEYS phải là số nguyên >= 100/],
    [{ APP_SESSION_SECRET: TEST_SECRET, APP_API_PROXY_TIMEOUT: '1.5' }, /APP_API_PROXY_TIMEOUT phải là số nguyên >= 1/],
    [{ APP_SESSION_SECRET: TEST_SECRET, APP_TRUST_PROXY: 'yes please' }, /APP_TRUST_PROXY phải là true, false, số proxy đứng trước \(số nguyên >= 0\) hoặc danh sách địa chỉ\/mạng CIDR của chúng \(vd\. 10\.0\.0\.0\/8, loopback\): invalid IP address: yes please \(nhận được 'yes please'\)/],
    [{ APP_SESSION_SECRET: TEST_SECRET, APP_AUTH_CLIENTS_CACHE_SECONDS: 'a minute' }, /APP_AUTH_CLIENTS_CACHE_SECONDS/],
    [{ APP_SESSION_SECRET: TEST_SECRET, APP_AUTH_TIMEOUT: '0' }, /APP_AUTH_TIMEOUT phải là số nguyên >= 1/],
    [{ APP_SESSION_SECRET: TEST_SECRET, APP_AUTH_BODY_TIMEOUT: 'ten' }, /APP_AUTH_BODY_TIMEOUT phải là số nguyên >= 1/],
    [{ APP_SESSION_SECRET: TEST_SECRET, APP_AUTH_MOCK: 'true', APP_AUTH_MOCK_USER: '{"permission":["/a"]}' }, /APP_AUTH_MOCK_USER: không có trường 'permission' \(chỉ có id, name, email, roles, permissions\)\./],
    [{ APP_SESSION_SECRET: TEST_SECRET, APP_AUTH_MOCK: 'true', APP_AUTH_MOCK_USER: '{"roles":"admin"}' }, /APP_AUTH_MOCK_USER: trường 'roles' phải là mảng chuỗi/],
    [{ APP_SESSION_SECRET: TEST_SECRET, APP_API_PROXY: 'false', APP_API_PROXY_TARGET: 'http://127.0.0.1:9' }, /APP_API_PROXY=false không dùng được cùng APP_API_PROXY_TARGET: bỏ một trong hai\./],
  ])('refuses to start with %j, naming the variable (exit code 1)', async (env, message) => {
    const { code, output } = await runGatewayToExit(env)
    expect(code).toBe(1)
    expect(output).toMatch(message)
    expect(output).not.toMatch(/at .*\.mjs/)
  })

  it('starts with an APP_SESSION_SECRET of exactly 32 characters (31 are refused above)', async () => {
    const gateway = await stack.bareGateway({ APP_AUTH_MOCK: 'true', APP_SESSION_SECRET: 's'.repeat(32) })
    const login = await post(gateway, '/auth/login', { username: 'alice', password: 'x' })
    expect(login.status).toBe(200)
    const cookie = cookiePair(findSetCookie(login, 'svc_session')!)
    expect(await (await fetch(`${gateway.url}/auth/session`, { headers: { cookie } })).json()).toEqual({ user: MOCK_USER, expiresAt: expect.any(Number) })
  })

  it('writes lines for people with APP_LOG_FORMAT=pretty, pino-pretty loaded for it alone', async () => {
    const gateway = await stack.bareGateway({ APP_SESSION_SECRET: TEST_SECRET, APP_AUTH_MOCK: 'true', APP_LOG_FORMAT: 'pretty' })
    expect((await fetch(`${gateway.url}/auth/session`)).status).toBe(200)
    await expect.poll(() => gateway.stdout()).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(\d+\): Listening on http:\/\/127\.0\.0\.1:\d+$/m)
    expect(gateway.stdout()).not.toMatch(/^\{"level"/m)
  })

  it('refuses to start on a port that is not one, or that is taken, saying so (exit code 1)', async () => {
    const bad = await runGatewayToExit({ APP_SESSION_SECRET: TEST_SECRET, APP_AUTH_MOCK: 'true', PORT: 'http' })
    expect(bad.code).toBe(1)
    expect(bad.output).toContain('PORT: \\"http\\" không phải cổng TCP (0–65535).')
    const holder = createServer().listen(0, '127.0.0.1')
    await once(holder, 'listening')
    const taken = await runGatewayToExit({ APP_SESSION_SECRET: TEST_SECRET, APP_AUTH_MOCK: 'true', PORT: String((holder.address() as AddressInfo).port) })
    holder.close()
    expect(taken.code).toBe(1)
    expect(taken.output).toMatch(/"level":"fatal".*không mở được cổng HTTP \(EADDRINUSE\)/)
    expect(taken.output).not.toMatch(/at .*\.mjs/)
  })
})
