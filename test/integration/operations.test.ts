import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { MESSENGER_OTP } from '../../dev/iam.mjs'
import { PATTERN_CHUNK, patternSha256 } from '../../dev/pattern.mjs'
import { loginCookie, sessionCookieOf } from '../support/login'
import { freePort, logEntries, type RunningGateway } from '../support/gateway'
import { scrape } from '../support/metrics'
import { rawConnection, rawRequest } from '../support/raw-http'
import { useStack } from '../support/stack'
import { readByPeer } from '../support/tcp'

const stack = useStack()

const json = { 'content-type': 'application/json' }

function login(gateway: RunningGateway, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return rawRequest(`${gateway.url}/auth/login`, { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify(body) })
}

/** How much each sample grew between two scrapes (absent = 0). */
function growth(before: Map<string, number>, after: Map<string, number>, name: string): number {
  return (after.get(name) ?? 0) - (before.get(name) ?? 0)
}

/** Log lines of a type ('access', 'audit'). */
function linesOf(gateway: RunningGateway, type: string) {
  return logEntries(gateway.stdout()).filter(entry => entry.type === type)
}

describe('probes', () => {
  it('/healthz is 200 { status: ok }, outside the cross-origin rule, and has no access line at info level', async () => {
    const gateway = await stack.gatewayWith()
    const answer = await rawRequest(`${gateway.url}/healthz`, { headers: { 'origin': 'https://evil.example', 'sec-fetch-site': 'cross-site' } })
    expect(answer.status).toBe(200)
    expect(JSON.parse(answer.body)).toEqual({ status: 'ok' })
    expect(answer.headers['cache-control']).toBe('no-store')
    // An unsafe method from another site is the probe's 405, not the cross-origin 403.
    const post = await rawRequest(`${gateway.url}/healthz`, { method: 'POST', headers: { 'origin': 'https://evil.example', 'sec-fetch-site': 'cross-site' }, body: '' })
    expect(post.status).toBe(405)
    expect(post.headers.allow).toBe('GET, HEAD')
    expect(JSON.parse(post.body)).toMatchObject({ statusCode: 405, statusMessage: 'Phương thức không được hỗ trợ.' })
    await rawRequest(`${gateway.url}/readyz`)
    await rawRequest(`${gateway.url}/auth/clients`)
    await expect.poll(() => linesOf(gateway, 'access').map(line => line.path)).toContain('/auth/clients')
    expect(linesOf(gateway, 'access').filter(line => line.group === 'probe')).toEqual([])
  })

  it('/readyz names each dependency; IAM and backend never make it fail; Redis down is 503', async () => {
    const redis = await stack.redisServer()
    try {
      const gateway = await stack.gatewayWith({ APP_REDIS_URL: redis.url, APP_API_PROXY_TARGET: `http://127.0.0.1:${await freePort()}` })
      // Not ready until its Redis connection is (the server listens before that).
      await expect.poll(async () => (await rawRequest(`${gateway.url}/readyz`)).status, { timeout: 5_000 }).toBe(200)
      const ready = await rawRequest(`${gateway.url}/readyz`)
      expect(ready.status).toBe(200)
      expect(JSON.parse(ready.body)).toEqual({ status: 'ready', checks: { config: 'ok', redis: 'up', iam: 'up', backend: 'down', backendPool: 'ok' } })
      expect(ready.headers['cache-control']).toBe('no-store')
      await redis.stop()
      const down = await rawRequest(`${gateway.url}/readyz`)
      expect(down.status).toBe(503)
      expect(JSON.parse(down.body)).toMatchObject({ status: 'not ready', checks: { redis: 'down' } })
      expect((await rawRequest(`${gateway.url}/healthz`)).status).toBe(200)
    }
    finally {
      await redis.stop()
    }
  })

  it('/readyz without Redis is ready, mock mode says so', async () => {
    const gateway = await stack.gatewayWith({ APP_AUTH_MOCK: 'true', APP_AUTH_BASE_URL: '' })
    const answer = await rawRequest(`${gateway.url}/readyz`)
    expect(answer.status).toBe(200)
    expect(JSON.parse(answer.body)).toEqual({ status: 'ready', checks: { config: 'ok', redis: 'not configured', iam: 'mock', backend: 'up', backendPool: 'ok' } })
  })
})

describe('metrics', () => {
  it('counts a scripted run exactly, on its own listener only', async () => {
    const metricsPort = await freePort()
    const gateway = await stack.gatewayWith({ APP_METRICS_PORT: String(metricsPort), APP_METRICS_HOST: '127.0.0.1', APP_RATE_LIMIT_PER_USER: '1' })
    // The public port has no /metrics: it is a page like any other (the login page for a visitor without a session).
    const publicMetrics = await rawRequest(`${gateway.url}/metrics`)
    expect(publicMetrics.status).toBe(302)
    expect(publicMetrics.headers.location).toBe('/auth/login?redirect=/metrics')
    expect(publicMetrics.body).not.toContain('svc_gateway_')
    expect((await rawRequest(`http://127.0.0.1:${metricsPort}/other`)).status).toBe(404)

    const before = await scrape(metricsPort)
    const good = await login(gateway, { username: 'admin', password: 'admin123' })
    expect(good.status).toBe(200)
    expect((await login(gateway, { username: 'viewer', password: 'viewer123' })).status).toBe(200)
    expect((await login(gateway, { username: 'sale', password: 'wrong-password' })).status).toBe(401)
    expect((await login(gateway, { username: 'sale', password: 'wrong-password' })).status).toBe(429)
    expect((await login(gateway, { username: 'sale' })).status).toBe(400)
    const cookie = sessionCookieOf(good)
    expect((await rawRequest(`${gateway.url}/api/orders`, { headers: { cookie } })).status).toBe(200)
    expect((await rawRequest(`${gateway.url}/api/orders/status/404`, { headers: { cookie } })).status).toBe(404)
    const broken = await stack.gatewayWith({ APP_METRICS_PORT: String(await freePort()), APP_API_PROXY_TARGET: `http://127.0.0.1:${await freePort()}` })
    expect((await rawRequest(`${broken.url}/api/orders`)).status).toBe(502)
    const after = await scrape(metricsPort)

    const grew = (name: string) => growth(before, after, name)
    expect(grew('svc_gateway_login_attempts_total{outcome="success"}')).toBe(2)
    expect(grew('svc_gateway_login_attempts_total{outcome="refused"}')).toBe(1)
    expect(grew('svc_gateway_login_attempts_total{outcome="limited"}')).toBe(1)
    expect(grew('svc_gateway_login_attempts_total{outcome="invalid"}')).toBe(1)
    expect(grew('svc_gateway_login_attempts_total{outcome="error"}')).toBe(0)
    expect(grew('svc_gateway_rate_limit_blocks_total{route="login"}')).toBe(1)
    expect(grew('svc_gateway_requests_total{group="login",method="POST",status_class="2xx"}')).toBe(2)
    expect(grew('svc_gateway_requests_total{group="login",method="POST",status_class="4xx"}')).toBe(3)
    expect(grew('svc_gateway_requests_total{group="api",method="GET",status_class="2xx"}')).toBe(1)
    expect(grew('svc_gateway_requests_total{group="api",method="GET",status_class="4xx"}')).toBe(1)
    expect(grew('svc_gateway_request_duration_seconds_count{group="api"}')).toBe(2)
    expect(grew('svc_gateway_backend_duration_seconds_count{status_class="2xx"}')).toBe(1)
    expect(grew('svc_gateway_backend_duration_seconds_count{status_class="4xx"}')).toBe(1)
    // Two logins that reached the IAM's login and user-info, and one refused at login.
    expect(grew('svc_gateway_iam_request_duration_seconds_count{endpoint="login"}')).toBe(3)
    expect(grew('svc_gateway_iam_request_duration_seconds_count{endpoint="userInfo"}')).toBe(2)
    expect(grew('svc_gateway_session_cache_total{result="miss"}')).toBe(1)
    expect(grew('svc_gateway_session_cache_total{result="hit"}')).toBe(1)
    expect(after.get('svc_gateway_open_streams')).toBe(0)
    expect(after.get('svc_gateway_process_resident_memory_bytes')).toBeGreaterThan(0)
    // The 502 belongs to the other gateway: its own metrics.
    expect(grew('svc_gateway_requests_total{group="api",method="GET",status_class="5xx"}')).toBe(0)
    // No label value comes from a path or a username.
    const names = [...after.keys()].join('\n')
    expect(names).not.toMatch(/orders|admin|viewer|sale/)
    // The request latencies (counted by the gateway, read by prom-client's registry) in Prometheus' histogram shape:
    // every bucket, cumulated, the last one (+Inf) equal to the count; the sum moved by the two requests' time.
    const buckets = [...after].filter(([series]) => series.startsWith('svc_gateway_request_duration_seconds_bucket{') && series.endsWith(',group="api"}'))
    expect(buckets.map(([series]) => /le="([^"]+)"/.exec(series)![1])).toEqual(['0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '30', '60', '+Inf'])
    const counts = buckets.map(([, count]) => count)
    expect(counts).toEqual([...counts].sort((a, b) => a - b))
    expect(counts.at(-1)).toBe(after.get('svc_gateway_request_duration_seconds_count{group="api"}'))
    expect(grew('svc_gateway_request_duration_seconds_sum{group="api"}')).toBeGreaterThan(0)
    expect(grew('svc_gateway_request_duration_seconds_sum{group="api"}')).toBeLessThan(10)
    const text = (await rawRequest(`http://127.0.0.1:${metricsPort}/metrics`)).body
    expect(text).toContain('# TYPE svc_gateway_request_duration_seconds histogram')
    expect(text).toContain('# TYPE svc_gateway_backend_duration_seconds histogram')
    expect(text).toContain('# TYPE svc_gateway_requests_total counter')
  })

  it('counts IAM failures by endpoint, and the 502 of an unreachable backend', async () => {
    const metricsPort = await freePort()
    const gateway = await stack.gatewayWith({ APP_METRICS_PORT: String(metricsPort), APP_API_PROXY_TARGET: `http://127.0.0.1:${await freePort()}` })
    // APP_METRICS_HOST unset: the listener holds loopback only (the address is read back from its socket).
    await expect.poll(() => logEntries(gateway.stdout()).find(entry => entry.port === metricsPort)).toMatchObject({ host: '127.0.0.1' })
    const before = await scrape(metricsPort)
    stack.iam.state.scenario = 'down'
    try {
      expect((await login(gateway, { username: 'admin', password: 'admin123' })).status).toBe(502)
    }
    finally {
      stack.iam.state.scenario = 'normal'
    }
    expect((await rawRequest(`${gateway.url}/api/orders`)).status).toBe(502)
    const after = await scrape(metricsPort)
    expect(growth(before, after, 'svc_gateway_iam_failures_total{endpoint="login",reason="unreachable"}')).toBe(1)
    expect(growth(before, after, 'svc_gateway_login_attempts_total{outcome="error"}')).toBe(1)
    expect(growth(before, after, 'svc_gateway_requests_total{group="api",method="GET",status_class="5xx"}')).toBe(1)
    expect(growth(before, after, 'svc_gateway_backend_duration_seconds_count{status_class="none"}')).toBe(1)
  })
})

describe('logs', () => {
  it('a full run at debug level: JSON lines only, access and audit lines, and no secret anywhere', async () => {
    const gateway = await stack.gatewayWith({ APP_LOG_LEVEL: 'debug', APP_AUTH_ENDPOINTS_LOGOUT: '/auth/logout-unknown', APP_RATE_LIMIT_PER_USER: '1' })
    // Login with an OTP sent by message.
    const sent = await rawRequest(`${gateway.url}/auth/otp/send`, { method: 'POST', headers: json, body: JSON.stringify({ username: 'otp.sms', password: 'otp123', clientId: 'ORDERS_WEB' }) })
    expect(sent.status).toBe(200)
    const { transactionId } = JSON.parse(sent.body) as { transactionId: string }
    const loggedIn = await login(gateway, { username: 'otp.sms', password: 'otp123', clientId: 'ORDERS_WEB', method: 'messenger', otp: MESSENGER_OTP, transactionId }, { 'x-request-id': 'audit-login-1' })
    expect(loggedIn.status).toBe(200)
    const cookie = sessionCookieOf(loggedIn)
    const cookieValue = cookie.slice('svc_session='.length)
    expect((await rawRequest(`${gateway.url}/auth/session`, { headers: { cookie } })).status).toBe(200)
    const proxied = await rawRequest(`${gateway.url}/api/orders?secret=query-value`, { headers: { cookie, 'x-request-id': 'access-1' } })
    expect(proxied.status).toBe(200)
    // Pages that do not exist, signed in and not: Vue Router warns of the path during the server render.
    expect((await rawRequest(`${gateway.url}/no-such-page?token=query-value&x=1`, { headers: { cookie } })).status).toBe(404)
    expect((await rawRequest(`${gateway.url}/no-such-page/deeper?next=/x?query-value`)).status).toBe(302)
    expect((await rawRequest(`${gateway.url}/auth/login?redirect=%2Fx%3Fquery-value&t=query-value`)).status).toBe(200)
    const token = (JSON.parse(proxied.body) as { headers: Record<string, string> }).headers.authorization!.replace(/^Bearer /, '')
    expect(token.length).toBeGreaterThan(100)
    // A refusal, a block, an IAM failure, a revocation, a probe, then the logout (its IAM notice fails: a warning).
    expect((await login(gateway, { username: 'sale', password: 'wrong-secret-pw' })).status).toBe(401)
    expect((await login(gateway, { username: 'sale', password: 'wrong-secret-pw' })).status).toBe(429)
    stack.iam.state.scenario = 'html'
    try {
      expect((await login(gateway, { username: 'viewer', password: 'viewer123' })).status).toBe(500)
    }
    finally {
      stack.iam.state.scenario = 'normal'
    }
    const admin = sessionCookieOf(await login(gateway, { username: 'admin', password: 'admin123' }))
    expect((await rawRequest(`${gateway.url}/api/admin/revoke-user`, { method: 'POST', headers: { ...json, cookie: admin }, body: JSON.stringify({ userId: 'u-viewer' }) })).status).toBe(200)
    expect((await rawRequest(`${gateway.url}/healthz`)).status).toBe(200)
    expect((await rawRequest(`${gateway.url}/auth/logout`, { headers: { cookie } })).status).toBe(302)
    await expect.poll(() => gateway.stdout()).toMatch(/IAM không nhận được thông báo đăng xuất \(401/)

    const entries = logEntries(gateway.stdout())
    const access = entries.filter(entry => entry.type === 'access')
    expect(access.find(entry => entry.requestId === 'access-1')).toMatchObject({ level: 'info', method: 'GET', path: '/api/orders', status: 200, client: '127.0.0.1', group: 'api' })
    const line = access.find(entry => entry.requestId === 'access-1')!
    expect(line.ms).toBeGreaterThan(0)
    expect(line.bytes).toBeGreaterThan(proxied.body.length)
    expect(access.find(entry => entry.path === '/healthz')).toMatchObject({ level: 'debug', group: 'probe' })

    const audit = entries.filter(entry => entry.type === 'audit')
    expect(audit.map(entry => entry.event)).toEqual(['otp.sent', 'login.success', 'login.refused', 'login.limited', 'login.error', 'login.success', 'revocation', 'logout'])
    expect(audit[1]).toMatchObject({ username: 'otp.sms', userId: 'u-otp.sms', application: 'ORDERS_WEB', client: '127.0.0.1', requestId: 'audit-login-1' })
    expect(audit[2]).toMatchObject({ event: 'login.refused', username: 'sale', status: 401, client: '127.0.0.1' })
    expect(audit[3]).toMatchObject({ event: 'login.limited', username: 'sale', status: 429 })
    expect(audit[6]).toMatchObject({ kind: 'user', userId: 'u-viewer' })
    expect(audit[7]).toMatchObject({ userId: 'u-otp.sms', client: '127.0.0.1' })

    const everything = gateway.output()
    for (const secret of ['otp123', 'wrong-secret-pw', 'admin123', MESSENGER_OTP, token, token.slice(4, 40), cookieValue, cookieValue.slice(3, 40), 'query-value']) {
      expect(everything, `a log line holds ${secret.slice(0, 12)}…`).not.toContain(secret)
    }
    expect(everything).not.toMatch(/Bearer|authorization|svc_session=/i)
    // The unknown page was said (Vue Router's warning), its query not.
    expect(everything).toMatch(/\/no-such-page\?…/)
  })
})

describe('a page the user may not open', () => {
  it('is a 403 in the server render and no error of the server: its access line, no error line, no stack', async () => {
    const gateway = await stack.gatewayWith()
    const cookie = await loginCookie(gateway, 'viewer', 'viewer123')
    const page = await rawRequest(`${gateway.url}/admin`, { headers: { cookie, 'accept': 'text/html', 'x-request-id': 'forbidden-page-1' } })
    expect(page.status).toBe(403)
    expect(page.body).toContain('Bạn không có quyền truy cập trang này.')
    await expect.poll(() => linesOf(gateway, 'access').find(entry => entry.requestId === 'forbidden-page-1')).toMatchObject({ level: 'info', path: '/admin', status: 403 })
    const entries = logEntries(gateway.stdout())
    expect(entries.filter(entry => entry.level === 'error' || entry.level === 'fatal')).toEqual([])
    expect(gateway.output()).not.toMatch(/\n\s+at\s/)
  })
})

describe('graceful shutdown', () => {
  it('lets a 4 s download finish after SIGTERM, refuses new connections, answers /readyz 503 meanwhile, exits 0', async () => {
    const gateway = await stack.gatewayWith({ APP_SHUTDOWN_TIMEOUT: '60' })
    const download = fetch(`${gateway.url}/api/slow-stream?seconds=4`).then(async (response) => {
      const hash = createHash('sha256')
      let bytes = 0
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        hash.update(chunk)
        bytes += chunk.length
      }
      return { status: response.status, bytes, sha256: hash.digest('hex') }
    })
    // A request whose headers are still arriving when the signal comes: it is served, with Connection: close.
    const probe = rawConnection(gateway.port)
    probe.socket.write('GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n')
    await readByPeer(probe.socket)
    const exited = new Promise<number | null>(resolve => gateway.process.once('exit', code => resolve(code)))
    gateway.process.kill('SIGTERM')
    await expect.poll(() => gateway.stdout()).toMatch(/nhận SIGTERM/)
    probe.socket.write('\r\n')
    await expect.poll(() => probe.received()).toMatch(/\r\n\r\n\{.*\}$/s)
    expect(probe.received()).toMatch(/^HTTP\/1\.1 503 /)
    expect(probe.received()).toMatch(/\r\nconnection: close\r\n/i)
    expect(JSON.parse(probe.received().split('\r\n\r\n')[1]!)).toMatchObject({ status: 'shutting down' })
    await expect(fetch(`${gateway.url}/healthz`)).rejects.toThrow()
    expect(gateway.process.exitCode).toBeNull()
    expect(await download).toEqual({ status: 200, bytes: 40 * PATTERN_CHUNK, sha256: patternSha256(40 * PATTERN_CHUNK) })
    expect(await exited).toBe(0)
    await expect.poll(() => gateway.stdout()).toMatch(/mọi yêu cầu đã xong/)
  })

  it('a second SIGTERM ends it at once, and so does the timeout', async () => {
    for (const second of [true, false]) {
      const gateway = await stack.gatewayWith({ APP_SHUTDOWN_TIMEOUT: second ? '60' : '1' })
      // Its answer has begun (fetch resolves on the headers): a stream in flight when the signal comes.
      const download = (await fetch(`${gateway.url}/api/slow-stream?seconds=30`)).arrayBuffer().catch((error: unknown) => error)
      const exited = new Promise<number | null>(resolve => gateway.process.once('exit', code => resolve(code)))
      const started = Date.now()
      gateway.process.kill('SIGTERM')
      if (second) {
        await expect.poll(() => gateway.stdout()).toMatch(/nhận SIGTERM/)
        gateway.process.kill('SIGTERM')
      }
      expect(await exited).toBe(0)
      expect(Date.now() - started).toBeLessThan(10_000)
      expect(await download).toBeInstanceOf(Error)
      await expect.poll(() => gateway.stdout()).toMatch(second ? /SIGTERM lần hai/ : /hết thời gian/)
    }
  })
})
