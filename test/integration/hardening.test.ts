import type { Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EchoedRequest } from '../support/echo-backend'
import { sessionCookieOf } from '../support/login'
import { crashLines, logEntries, type RunningGateway } from '../support/gateway'
import { rawConnection, rawRequest } from '../support/raw-http'
import { startScriptedIam } from '../support/scripted-iam'
import { useStack } from '../support/stack'

// Messages written out here, never imported from the code under test.
const CROSS_ORIGIN = 'Yêu cầu khác nguồn gốc bị từ chối.'
const NOT_JSON = 'Dữ liệu gửi lên phải ở dạng JSON.'
const METHOD_NOT_ALLOWED = 'Phương thức không được hỗ trợ.'
const API_PATH_INVALID = 'Đường dẫn API không hợp lệ.'
const BODY_TIMEOUT = 'Hết thời gian chờ dữ liệu gửi lên.'
const IAM_INVALID = 'IAM trả dữ liệu không hợp lệ.'
const LOGOUT_QUESTION = 'Bạn có muốn đăng xuất?'
const CROSS_SITE = { 'sec-fetch-site': 'cross-site', 'origin': 'http://evil.test' }

const stack = useStack({ gateway: {} })

const json = { 'content-type': 'application/json' }
const credentials = (username: string, password: string) => JSON.stringify({ username, password })

async function loginCookie(username = 'sale', password = 'sale123'): Promise<string> {
  const answer = await rawRequest(`${stack.gateway.url}/auth/login`, { method: 'POST', headers: json, body: credentials(username, password) })
  expect(answer.status).toBe(200)
  return sessionCookieOf(answer)
}

/** Runs `action` and returns what the IAM and the backend received meanwhile. */
async function observed(action: () => Promise<unknown>): Promise<{ iamCalls: number, backend: EchoedRequest[] }> {
  const iamBefore = stack.iam.requests.length
  const echoBefore = stack.echo.received.length
  await action()
  return { iamCalls: stack.iam.requests.length - iamBefore, backend: stack.echo.received.slice(echoBefore) }
}

function errorBody(body: string) {
  return JSON.parse(body) as { statusCode: number, statusMessage: string }
}

/** GET `path` is answered 400 'Đường dẫn API không hợp lệ.' and the backend hears nothing. */
async function expectInvalidApiPath(path: string) {
  const seen = await observed(async () => {
    const answer = await rawRequest(stack.gateway.url + path)
    expect(answer.status).toBe(400)
    expect(errorBody(answer.body)).toMatchObject({ statusCode: 400, statusMessage: API_PATH_INVALID })
  })
  expect(seen.backend).toEqual([])
}

describe('cross-origin rule on every path, whatever its spelling', () => {
  it.each([
    ['POST', '/%61uth/login'], ['POST', '/auth/%6cogin'], ['POST', '/auth/login/'], ['POST', '/%61uth/otp/send'],
    ['POST', '/api/feedback'], ['POST', '/api/feedb%61ck'], ['POST', '/%61pi/feedback'], ['POST', '/orders'],
    ['POST', '/'], ['PUT', '/api/orders'], ['DELETE', '/%61pi/orders/1'], ['PATCH', '/auth/session'],
  ])('%s %s from another site: 403, and neither the IAM nor the backend hears of it', async (method, path) => {
    const seen = await observed(async () => {
      const answer = await rawRequest(stack.gateway.url + path, { method, headers: { ...CROSS_SITE, 'content-type': 'text/plain' }, body: credentials('viewer', 'viewer123') })
      expect(answer.status).toBe(403)
      expect(errorBody(answer.body)).toMatchObject({ statusCode: 403, statusMessage: CROSS_ORIGIN })
      expect(answer.headers['set-cookie']).toBeUndefined()
    })
    expect(seen).toEqual({ iamCalls: 0, backend: [] })
  })

  it('lets HEAD and OPTIONS through from another site', async () => {
    const head = await rawRequest(`${stack.gateway.url}/auth/session`, { method: 'HEAD', headers: CROSS_SITE })
    expect(head.status).toBe(200)
    expect(head.body).toBe('')
    const options = await observed(async () => {
      expect((await rawRequest(`${stack.gateway.url}/api/orders`, { method: 'OPTIONS', headers: CROSS_SITE })).status).toBe(200)
    })
    expect(options.backend.map(request => request.method)).toEqual(['OPTIONS'])
  })

  it('serves the app\'s own POST /api route to a same-origin request', async () => {
    const answer = await rawRequest(`${stack.gateway.url}/api/feedback`, { method: 'POST', headers: { 'sec-fetch-site': 'same-origin' }, body: '{}' })
    expect(answer.status).toBe(200)
    expect(JSON.parse(answer.body)).toEqual({ ok: true, servedBy: 'playground' })
  })
})

describe('POST /auth/login and /auth/otp/send take JSON only', () => {
  it.each([
    ['text/plain', 'text/plain'],
    ['a form', 'application/x-www-form-urlencoded'],
    ['multipart', 'multipart/form-data; boundary=x'],
    ['a JSON look-alike', 'application/jsonp'],
    ['no type', undefined],
  ])('%s: 415 before any IAM call', async (_name, type) => {
    for (const path of ['/auth/login', '/auth/otp/send']) {
      const seen = await observed(async () => {
        const answer = await rawRequest(stack.gateway.url + path, { method: 'POST', headers: type ? { 'content-type': type } : {}, body: credentials('viewer', 'viewer123') })
        expect(answer.status).toBe(415)
        expect(errorBody(answer.body)).toEqual({ statusCode: 415, statusMessage: NOT_JSON, message: NOT_JSON })
        expect(answer.headers['set-cookie']).toBeUndefined()
      })
      expect(seen.iamCalls).toBe(0)
    }
  })

  it('accepts application/json with parameters, in any case', async () => {
    const answer = await rawRequest(`${stack.gateway.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'Application/JSON; charset=UTF-8' }, body: credentials('viewer', 'viewer123') })
    expect(answer.status).toBe(200)
  })
})

describe('contract routes answer 405 to methods they do not have', () => {
  it.each([
    ['PUT', '/auth/login', 'GET, HEAD, POST'],
    ['PUT', '/%61uth/login', 'GET, HEAD, POST'],
    ['DELETE', '/auth/session', 'GET, HEAD'],
    ['DELETE', '/auth/session/', 'GET, HEAD'],
    ['POST', '/auth/session', 'GET, HEAD'],
    ['POST', '/auth/logout', 'GET, HEAD'],
    ['GET', '/auth/otp/send', 'POST'],
    ['PATCH', '/auth/clients', 'GET, HEAD'],
    ['OPTIONS', '/auth/login', 'GET, HEAD, POST'],
  ])('%s %s: 405 JSON with Allow: %s', async (method, path, allow) => {
    const answer = await rawRequest(stack.gateway.url + path, { method, headers: { ...json, accept: 'text/html' }, body: '{}' })
    expect(answer.status).toBe(405)
    expect(answer.headers.allow).toBe(allow)
    expect(answer.headers['cache-control']).toBe('no-store')
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(errorBody(answer.body)).toMatchObject({ statusCode: 405, statusMessage: METHOD_NOT_ALLOWED })
  })

  it('keeps GET and HEAD /auth/login as the login page, and serves HEAD of the GET routes as GET', async () => {
    const page = await rawRequest(`${stack.gateway.url}/auth/login`)
    expect(page.status).toBe(200)
    expect(page.headers['content-type']).toMatch(/^text\/html/)
    expect((await rawRequest(`${stack.gateway.url}/auth/login`, { method: 'HEAD' })).status).toBe(200)
    const head = await rawRequest(`${stack.gateway.url}/auth/clients`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers['content-type']).toMatch(/^application\/json/)
    expect(head.headers['cache-control']).toBe('no-store')
    expect(head.body).toBe('')
  })
})

describe('the app\'s own /api routes: one decision, the router\'s', () => {
  it.each(['/api/health', '/api/hea%6cth', '/api/health/', '/api/health?x=1'])('%s is the app\'s route, never proxied', async (path) => {
    const seen = await observed(async () => {
      const answer = await rawRequest(stack.gateway.url + path)
      expect(answer.status).toBe(200)
      expect(JSON.parse(answer.body)).toEqual({ ok: true, servedBy: 'playground' })
    })
    expect(seen.backend).toEqual([])
  })

  it.each(['/api//health', '/api/health;x', '/api/health;jsessionid=1/', '/api/HEALTH', '/api/Health', '/api/hea%256cth', '/api///health'])(
    '%s (another spelling of it) is refused with 400 and reaches no backend',
    expectInvalidApiPath,
  )

  it('still proxies paths of the backend that only resemble it', async () => {
    const seen = await observed(async () => {
      for (const path of ['/api/healthz', '/api/health-report', '/api/orders;v=2']) expect((await rawRequest(stack.gateway.url + path)).status).toBe(200)
    })
    expect(seen.backend.map(request => request.url)).toEqual(['/healthz', '/health-report', '/orders;v=2'])
  })
})

describe('the proxy\'s requests and answers', () => {
  it('drops client-address headers it does not set, and sets X-Real-IP itself', async () => {
    const spoofed = {
      'forwarded': 'for=6.6.6.6;proto=https', 'x-real-ip': '6.6.6.6', 'true-client-ip': '6.6.6.6', 'x-client-ip': '6.6.6.6',
      'cf-connecting-ip': '6.6.6.6', 'fastly-client-ip': '6.6.6.6', 'x-cluster-client-ip': '6.6.6.6', 'x-forwarded-port': '8443',
      'x-forwarded-prefix': '/admin', 'x-forwarded-server': 'evil', 'x-original-url': '/admin', 'x-rewrite-url': '/admin',
      'x-original-forwarded-for': '6.6.6.6', 'x-forwarded-for': '6.6.6.6',
    }
    const seen = await observed(() => rawRequest(`${stack.gateway.url}/api/whoami`, { headers: spoofed }))
    const headers = seen.backend[0]!.headers
    for (const name of Object.keys(spoofed)) {
      if (!['x-real-ip', 'x-forwarded-for'].includes(name)) expect(headers[name], name).toBeUndefined()
    }
    expect(headers['x-real-ip']).toBe('127.0.0.1')
    expect(headers['x-forwarded-for']).toBe('127.0.0.1')
  })

  it('lets the app\'s server code add headers to proxied requests (onProxyRequest)', async () => {
    const seen = await observed(() => rawRequest(`${stack.gateway.url}/api/orders`, { headers: { 'x-app': 'forged' } }))
    expect(seen.backend[0]!.headers['x-app']).toBe('playground')
  })

  it.each(['/api/..;/admin', '/api/%2e%2e;a=b/x', '/api/..%3b/x', '/api/.;/x', '/api/x/..;jsessionid=1/admin', '/api/%2e%2e%3B/x'])(
    '%s: 400, no backend request',
    expectInvalidApiPath,
  )

  // The second review: spellings a backend may read as another path (the app's own POST /api/admin/revoke-user among them).
  it.each(['/api/admin/revoke-user.', '/api/admin/revoke-user%2E', '/api/admin/revoke-user%20', '/api/admin/revoke-user%09',
    '/api/admin%00/revoke-user', '/api/%EF%BC%8E%EF%BC%8E/admin', '/api/admin/revoke-user%EF%BC%8E', '/api/%20admin/revoke-user'])(
    '%s: 400, no backend request',
    expectInvalidApiPath,
  )

  it.each(['GET http://other.test/x', 'GET http://other.test/api/orders?token=secret', 'POST https://127.0.0.1/auth/login', 'OPTIONS *'])(
    'answers %s (not a path) with 400 and echoes nothing of it', async (line) => {
      const before = stack.echo.received.length
      const { socket, received } = rawConnection(stack.gateway.port)
      socket.write(`${line} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n`)
      await expect.poll(received).toMatch(/\r\n\r\n\{.*\}$/s)
      socket.destroy()
      expect(received()).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/)
      expect(errorBody(received().split('\r\n\r\n')[1]!)).toEqual({ statusCode: 400, statusMessage: 'Đường dẫn yêu cầu không hợp lệ.', message: 'Đường dẫn yêu cầu không hợp lệ.' })
      expect(received()).not.toMatch(/other\.test|secret|https?:/)
      expect(stack.echo.received.length).toBe(before)
    },
  )

  it('never lets a backend set the gateway\'s own cookies', async () => {
    const answer = await rawRequest(`${stack.gateway.url}/api/gateway-cookies`)
    expect(answer.status).toBe(200)
    // Nor a nameless cookie ('=svc_session=…'), which the browser would send back as `svc_session=…`.
    expect(answer.headers['set-cookie']).toEqual(['kept=1; Path=/'])
    await rawRequest(`${stack.gateway.url}/api/gateway-cookies`)
    // Said in the log, once a minute at most (the logger writes every 50 ms: wait for it, then past another write).
    const said = () => stack.gateway.output().match(/svc_session\/svc_device/g)?.length ?? 0
    await expect.poll(said).toBeGreaterThan(0)
    await new Promise(resolve => setTimeout(resolve, 200))
    expect(said()).toBe(1)
  })

  it('passes the final answer after a backend\'s 103 Early Hints, on a connection that keeps working', async () => {
    const { socket, received } = rawConnection(stack.gateway.port)
    const request = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`
    socket.write(request('/api/early-hints'))
    await expect.poll(() => received(), { timeout: 5_000 }).toMatch(/"url":"\/early-hints"/)
    expect(received()).toMatch(/^HTTP\/1\.1 200 /)
    socket.write(request('/api/second'))
    await expect.poll(() => received(), { timeout: 5_000 }).toMatch(/"url":"\/second"/)
    socket.destroy()
  })

  it('proxies 200 request bodies without a single exception', async () => {
    const cookie = await loginCookie()
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => rawRequest(`${stack.gateway.url}/api/items/${i}`, {
      method: 'PUT',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ i, pad: 'x'.repeat(2_000) }),
    })))
    expect(answers.every(answer => answer.status === 200)).toBe(true)
    expect(answers.map(answer => JSON.parse(answer.body).bodyBytes)).toEqual(answers.map((_, i) => JSON.stringify({ i, pad: 'x'.repeat(2_000) }).length))
    expect(crashLines(stack.gateway.output())).toEqual([])
  })
})

describe('one svc_session only', () => {
  it('treats two svc_session values as no session, and clears the gateway\'s own', async () => {
    const cookie = await loginCookie()
    const value = cookie.slice('svc_session='.length)
    for (const header of [`svc_session=planted; ${cookie}`, `${cookie}; svc_session=${value}`, `${cookie}; other=1; svc_session=x`]) {
      const session = await rawRequest(`${stack.gateway.url}/auth/session`, { headers: { cookie: header } })
      expect(JSON.parse(session.body)).toEqual({ user: null, expiresAt: null })
      expect(session.headers['set-cookie']).toEqual(['svc_session=; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/; HttpOnly; SameSite=Lax; Secure'])
      const seen = await observed(() => rawRequest(`${stack.gateway.url}/api/orders`, { headers: { cookie: header } }))
      expect(seen.backend[0]!.headers.authorization).toBeUndefined()
    }
    const single = await rawRequest(`${stack.gateway.url}/auth/session`, { headers: { cookie } })
    expect(JSON.parse(single.body).user.id).toBe('u-sale')
    expect(single.headers['set-cookie']).toBeUndefined()
  })
})

describe('logout reached from another site', () => {
  it.each(['cross-site', 'same-site'])('Sec-Fetch-Site %s: a page asks, and the session stays', async (site) => {
    const cookie = await loginCookie()
    const answer = await rawRequest(`${stack.gateway.url}/auth/logout?redirect=/orders%3Fpage%3D2`, { headers: { cookie, 'sec-fetch-site': site, 'sec-fetch-mode': 'navigate' } })
    expect(answer.status).toBe(200)
    expect(answer.headers['set-cookie']).toBeUndefined()
    expect(answer.headers['cache-control']).toBe('no-store')
    expect(answer.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(answer.headers['x-frame-options']).toBe('DENY')
    expect(answer.headers['content-security-policy']).toContain('frame-ancestors \'none\'')
    expect(answer.body).toContain(LOGOUT_QUESTION)
    expect(answer.body).toContain('href="/auth/logout?redirect=%2Forders%3Fpage%3D2"')
    const session = await rawRequest(`${stack.gateway.url}/auth/session`, { headers: { cookie } })
    expect(JSON.parse(session.body).user.id).toBe('u-sale')
  })

  it('asks with a hostile redirect replaced by /', async () => {
    const answer = await rawRequest(`${stack.gateway.url}/auth/logout?redirect=//evil.test/%22%3E%3Cscript%3E`, { headers: { 'sec-fetch-site': 'cross-site' } })
    expect(answer.body).toContain('href="/auth/logout?redirect=%2F"')
    expect(answer.body).not.toContain('evil.test')
  })

  it.each([['same-origin'], ['none'], [undefined]])('Sec-Fetch-Site %s: logs out with the 302', async (site) => {
    const cookie = await loginCookie()
    const answer = await rawRequest(`${stack.gateway.url}/auth/logout?redirect=/orders`, { headers: { cookie, ...(site ? { 'sec-fetch-site': site } : {}) } })
    expect(answer.status).toBe(302)
    expect(answer.headers.location).toBe('/orders')
    expect(answer.headers['set-cookie']).toEqual(['svc_session=; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/; HttpOnly; SameSite=Lax; Secure'])
  })
})

describe('IAM answers that make no sense', () => {
  let scripted: Awaited<ReturnType<typeof startScriptedIam>>
  let odd: RunningGateway
  beforeAll(async () => {
    scripted = await startScriptedIam()
    odd = await stack.bareGateway({ APP_AUTH_BASE_URL: scripted.url, APP_RATE_LIMIT_PER_USER: '0', APP_RATE_LIMIT_PER_IP: '0' })
  })
  afterAll(async () => {
    await odd?.stop()
    await scripted?.close()
  })
  const tryLogin = () => rawRequest(`${odd.url}/auth/login`, { method: 'POST', headers: json, body: credentials('a', 'b') })

  it('shows an IAM refusal message at most 300 characters long, without control characters', async () => {
    scripted.answer('200 OK', JSON.stringify({ code: 'AUTH001', message: `Sai\u0000 mật\r\nkhẩu\u202E ${'x'.repeat(900_000)}`, body: null }))
    const answer = await tryLogin()
    expect(answer.status).toBe(401)
    const { statusMessage } = errorBody(answer.body)
    expect(Array.from(statusMessage)).toHaveLength(300)
    expect(statusMessage.startsWith('Sai mật khẩu xx')).toBe(true)
    expect(answer.body.length).toBeLessThan(3_000)
  })

  it.each([
    ['a redirect', '302 Found', '{}', 'application/json'],
    ['a status of 700', '700 Odd', '{}', 'application/json'],
    ['a 2xx HTML page', '200 OK', '<!doctype html><h1>Đăng nhập</h1>', 'text/html'],
    ['a 1xx-like status of 199', '199 Odd', '{}', 'application/json'],
  ])('%s: 502 with its own message', async (_name, status, body, type) => {
    scripted.answer(status, body, type)
    const answer = await tryLogin()
    expect(answer.status).toBe(502)
    expect(errorBody(answer.body)).toMatchObject({ statusCode: 502, statusMessage: IAM_INVALID })
  })

  it.each(['API001', 'API0000'])('refuses a login whose envelope code %s only starts like the success code, with no cookie', async (code) => {
    const login = { userId: 'u-1', fullName: 'Gần Đúng', email: 'gan@dung.vn', listRole: [], authorization: [], tokenData: { access_token: 'near-token', expires_in: 3600 } }
    scripted.answer('200 OK', JSON.stringify({ code, message: 'Gần đúng mà không phải.', body: login }))
    const answer = await tryLogin()
    expect(answer.status).toBe(401)
    expect(errorBody(answer.body)).toMatchObject({ statusCode: 401, statusMessage: 'Gần đúng mà không phải.' })
    expect(((answer.headers['set-cookie'] ?? []) as string[]).filter(line => line.startsWith('svc_session='))).toEqual([])
  })

  it('refuses an IAM answer of 110,000 permissions (under 1 MiB) at once with a 502, and answers others meanwhile', async () => {
    const flood = Array.from({ length: 110_000 }, (_, i) => `/${i.toString(36)}`)
    const body = JSON.stringify({ code: 'API000', message: 'OK', body: { userId: 'u-1', fullName: 'Nhiều Quyền', email: 'n@x.vn', listRole: [], authorization: flood, tokenData: { access_token: 'flood-token', expires_in: 3600 } } })
    expect(Buffer.byteLength(body)).toBeLessThan(1024 * 1024)
    scripted.answer('200 OK', body)
    const floods = Promise.all(Array.from({ length: 4 }, () => tryLogin()))
    let slowest = 0
    for (let i = 0; i < 10; i++) {
      const started = performance.now()
      expect((await rawRequest(`${odd.url}/healthz`)).status).toBe(200)
      slowest = Math.max(slowest, performance.now() - started)
    }
    for (const answer of await floods) {
      expect(answer.status).toBe(502)
      expect(errorBody(answer.body)).toMatchObject({ statusCode: 502, statusMessage: 'IAM trả quá nhiều vai trò hoặc quyền (tối đa 10.000).' })
    }
    // Quadratic de-duplication held the process ~9 s per such login (four of them here); linear work and the cap take
    // milliseconds, about 1 s at a load of 10 on two cores: the bound sits between, with room for a loaded machine.
    expect(slowest).toBeLessThan(4_000)
    await expect.poll(() => odd.output()).toMatch(/IAM trả 110000 mục permissions, quá giới hạn 10000/)
  })

  it('refuses an IAM answer over 1 MiB with its own 502, logged', async () => {
    scripted.answer('200 OK', JSON.stringify({ code: 'API000', message: 'x'.repeat(1_100_000), body: null }))
    const answer = await tryLogin()
    expect(answer.status).toBe(502)
    expect(errorBody(answer.body)).toMatchObject({ statusCode: 502, statusMessage: 'IAM trả dữ liệu quá lớn (tối đa 1 MiB).' })
    await expect.poll(() => odd.output()).toMatch(/IAM trả dữ liệu lớn hơn 1 MiB/)
  })

  it('keeps an HTTP error status of the IAM', async () => {
    scripted.answer('503 Service Unavailable', 'down', 'text/plain')
    const answer = await tryLogin()
    expect(answer.status).toBe(503)
    expect(errorBody(answer.body).statusMessage).toBe('IAM trả lỗi HTTP 503.')
  })
})

describe('GET /auth/clients answers from a per-process copy', () => {
  it('calls the IAM once for 50 anonymous requests within the cache time', async () => {
    const count = () => stack.iam.requests.filter(request => request.path === '/iam/client/findAll').length
    const before = count()
    const answers = await Promise.all(Array.from({ length: 50 }, () => rawRequest(`${stack.gateway.url}/auth/clients`)))
    expect(new Set(answers.map(answer => answer.body)).size).toBe(1)
    expect(JSON.parse(answers[0]!.body).clients).toHaveLength(2)
    expect(count() - before).toBeLessThanOrEqual(1)
  })

  it('keeps no failed call, and calls every time with 0', async () => {
    const fresh = await stack.gatewayWith({ APP_AUTH_CLIENTS_CACHE_SECONDS: '5' })
    const off = await stack.gatewayWith({ APP_AUTH_CLIENTS_CACHE_SECONDS: '0' })
    try {
      const count = () => stack.iam.requests.filter(request => request.path === '/iam/client/findAll').length
      stack.iam.state.scenario = 'refuse-clients'
      expect(JSON.parse((await rawRequest(`${fresh.url}/auth/clients`)).body)).toEqual({ clients: [] })
      stack.iam.state.scenario = 'normal'
      expect(JSON.parse((await rawRequest(`${fresh.url}/auth/clients`)).body).clients).toHaveLength(2)
      const before = count()
      for (let i = 0; i < 5; i++) await rawRequest(`${off.url}/auth/clients`)
      expect(count() - before).toBe(5)
    }
    finally {
      stack.iam.state.scenario = 'normal'
      await fresh.stop()
      await off.stop()
    }
  })
})

describe('shutdown during an upload', () => {
  it('lets the upload finish and exits 0', async () => {
    const draining = await stack.gatewayWith()
    const { socket, received } = rawConnection(draining.port)
    const chunk = 'y'.repeat(64 * 1024)
    socket.write(`PUT /api/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${chunk.length * 10}\r\n\r\n`)
    socket.write(chunk)
    await new Promise(resolve => setTimeout(resolve, 200))
    const exited = new Promise<number | null>(resolve => draining.process.once('exit', code => resolve(code)))
    draining.process.kill('SIGTERM')
    for (let i = 1; i < 10; i++) {
      await new Promise(resolve => setTimeout(resolve, 100))
      socket.write(chunk)
    }
    await expect.poll(() => received(), { timeout: 10_000 }).toMatch(/"bodyBytes":655360/)
    expect(received()).toMatch(/^HTTP\/1\.1 200 /)
    expect(await exited).toBe(0)
    expect(crashLines(draining.output())).toEqual([])
  })
})

describe('time limits: an /auth body has its own, an /api stream has none while bytes move', () => {
  // The limits are set short here (1 s); their shipped values are checked in test/unit/config.test.ts and below.
  let timed: RunningGateway
  beforeAll(async () => {
    timed = await stack.gatewayWith({ APP_AUTH_BODY_TIMEOUT: '1', APP_API_PROXY_TIMEOUT: '1000', APP_API_BODY_IDLE_TIMEOUT: '1' })
  })
  const authBody = (socket: Socket) => socket.write('POST /auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"username":')

  it('answers 408 to a silent /auth body after APP_AUTH_BODY_TIMEOUT and closes the connection', async () => {
    const { socket, received } = rawConnection(timed.port)
    const closed = new Promise<number>(resolve => socket.on('close', () => resolve(Date.now())))
    const started = Date.now()
    authBody(socket)
    const end = await closed
    expect(end - started).toBeGreaterThanOrEqual(950)
    expect(end - started).toBeLessThan(3_000)
    expect(received()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/)
    expect(received()).toContain(BODY_TIMEOUT)
  })

  it('counts the whole /auth body, not its silences: a body still trickling gets the 408 too', async () => {
    const { socket, received } = rawConnection(timed.port)
    let open = true
    socket.on('close', () => {
      open = false
    })
    authBody(socket)
    for (let i = 0; i < 12 && open; i++) {
      await new Promise(resolve => setTimeout(resolve, 250))
      if (open) socket.write(' ')
    }
    await expect.poll(() => received(), { timeout: 5_000 }).toMatch(/^HTTP\/1\.1 408 /)
    expect(received()).toContain(BODY_TIMEOUT)
  })

  it('carries an /api upload that keeps moving for 4 times every limit (body idle, backend silence, /auth body), whole', async () => {
    const { socket, received } = rawConnection(timed.port)
    socket.write('POST /api/slow-upload HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n')
    for (let i = 0; i < 16; i++) {
      socket.write('4\r\nabcd\r\n')
      await new Promise(resolve => setTimeout(resolve, 250))
    }
    socket.write('0\r\n\r\n')
    await expect.poll(() => received(), { timeout: 5_000 }).toMatch(/"bodyBytes":64/)
    expect(received()).toMatch(/^HTTP\/1\.1 200 /)
    socket.destroy()
  })

  it('runs a server with no total-time cap on a request (Node\'s default 300 s would cut a long upload) and 60 s for headers', async () => {
    const [limits] = logEntries(stack.gateway.stdout()).filter(entry => entry.type === 'server')
    expect(limits).toMatchObject({ requestTimeout: 0, headersTimeout: 60_000 })
  })
})
