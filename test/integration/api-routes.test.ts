import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { connect } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { REFUSED_PATHS } from '../unit/api-path-corpus'
import { startEchoBackend, type EchoedRequest } from '../support/echo-backend'
import { freePort, logEntries, runGatewayToExit, TEST_SECRET, type RunningGateway } from '../support/gateway'
import { loginCookie } from '../support/login'
import { scrape } from '../support/metrics'
import { rawRequest } from '../support/raw-http'
import { useStack } from '../support/stack'
import { startWsBackend } from '../support/ws-backend'

type Echo = Awaited<ReturnType<typeof startEchoBackend>>

// The stack's echo backend is APP_API_PROXY_TARGET (the default route); three more backends sit behind named routes.
const stack = useStack({ backend: 'echo', backendPath: '/d' })
const backends = {} as { orders: Echo, billing: Echo, cms: Echo, live: Awaited<ReturnType<typeof startWsBackend>> }
let gateway: RunningGateway
let metricsPort: number
const dir = mkdtempSync(join(tmpdir(), 'svc-routes-'))

/** Writes a routes file (YAML) and returns its path. */
function routesFile(name: string, text: string): string {
  const file = join(dir, name)
  writeFileSync(file, text)
  return file
}

beforeAll(async () => {
  const [orders, billing, cms, live] = await Promise.all([startEchoBackend(), startEchoBackend(), startEchoBackend(), startWsBackend()])
  Object.assign(backends, { orders, billing, cms, live })
  const down = `http://127.0.0.1:${await freePort()}`
  const file = routesFile('routes.yaml', `
# Three backends behind one session, and one that does not answer.
routes:
  - name: orders
    prefix: /api/orders
    target: ${orders.url}/o/
  - name: orders-public
    prefix: /api/orders/public
    target: ${orders.url}/pub
    token: optional
  - name: billing
    prefix: /api/billing
    target: ${billing.url}/b
    permissions: [/orders/delete]
    websocket: false
    headers:
      X-Billing-Tenant: north
  - name: cms
    prefix: /api/cms
    target: ${cms.url}/c
    token: none
  - name: live
    prefix: /api/live
    target: ${live.url}
  - name: reports
    prefix: /api/reports
    target: ${down}/r
    token: optional
`)
  metricsPort = await freePort()
  gateway = await stack.gatewayWith({ APP_API_ROUTES_FILE: file, APP_METRICS_PORT: String(metricsPort) })
})
afterAll(async () => {
  await gateway?.stop()
  await Promise.all([backends.orders?.close(), backends.billing?.close(), backends.cms?.close(), backends.live?.close()])
})

/** The raw token the development IAM issued for the session last logged in (what the proxy must send as Bearer). */
function lastToken(): string {
  return stack.iam.requests.filter(r => r.path === '/iam/user/userInfo').at(-1)!.headers.authorization as string
}

/** How many requests each backend has received so far. */
function counts() {
  return { default: stack.echo.received.length, orders: backends.orders.received.length, billing: backends.billing.received.length, cms: backends.cms.received.length }
}

/** A GET with the exact raw path (fetch would normalise it), echoed or refused. */
async function get(path: string, headers: Record<string, string> = {}) {
  const answer = await rawRequest(`${gateway.url}${path}`, { headers })
  return { ...answer, echoed: answer.status === 200 && answer.headers['x-backend'] === 'echo' ? JSON.parse(answer.body) as EchoedRequest : undefined }
}

describe('routes file: each route its backend and its token rule', () => {
  it('user route: the session\'s token to its own backend only, under its base path; no cookie', async () => {
    const cookie = await loginCookie(gateway, 'sale', 'sale123')
    const token = lastToken()
    const before = counts()
    const answer = await get('/api/orders/42/items?x=1', { cookie, authorization: 'Bearer forged' })
    expect(answer.status).toBe(200)
    expect(answer.echoed!.url).toBe('/o/42/items?x=1')
    expect(answer.echoed!.headers.authorization).toBe(`Bearer ${token}`)
    expect(answer.echoed!.headers.cookie).toBeUndefined()
    expect(counts()).toEqual({ ...before, orders: before.orders + 1 })
  })

  it('user route without a session: 401 at the gateway, the backend counts no request', async () => {
    const before = counts()
    const answer = await get('/api/orders/42', { authorization: 'Bearer forged' })
    expect(answer.status).toBe(401)
    expect(JSON.parse(answer.body)).toEqual({ statusCode: 401, statusMessage: 'Chưa đăng nhập hoặc phiên đăng nhập đã hết hạn.', message: 'Chưa đăng nhập hoặc phiên đăng nhập đã hết hạn.' })
    expect(counts()).toEqual(before)
  })

  it('optional route (the longest prefix wins): no Authorization without a session, the token with one', async () => {
    const anonymous = await get('/api/orders/public/menu', { authorization: 'Bearer forged' })
    expect(anonymous.echoed!.url).toBe('/pub/menu')
    expect(anonymous.echoed!.headers.authorization).toBeUndefined()
    const cookie = await loginCookie(gateway, 'viewer', 'viewer123')
    const signedIn = await get('/api/orders/public/menu', { cookie })
    expect(signedIn.echoed!.headers.authorization).toBe(`Bearer ${lastToken()}`)
    expect(signedIn.echoed!.headers.cookie).toBeUndefined()
  })

  it('none route: never an Authorization or a cookie, signed in or not', async () => {
    const cookie = await loginCookie(gateway, 'admin', 'admin123')
    const before = counts()
    for (const headers of [{ cookie, authorization: 'Bearer forged' }, { authorization: 'Basic YTpi' }, {}]) {
      const answer = await get('/api/cms/pages/home', headers)
      expect(answer.echoed!.url).toBe('/c/pages/home')
      expect(answer.echoed!.headers.authorization).toBeUndefined()
      expect(answer.echoed!.headers.cookie).toBeUndefined()
    }
    expect(counts()).toEqual({ ...before, cms: before.cms + 3 })
  })

  it('permissions: 403 in the contract\'s form before the backend for a user without them; the holder passes with its headers', async () => {
    const viewer = await loginCookie(gateway, 'viewer', 'viewer123')
    const before = counts()
    const refused = await get('/api/billing/invoices', { cookie: viewer })
    expect(refused.status).toBe(403)
    expect(refused.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(JSON.parse(refused.body)).toEqual({ statusCode: 403, statusMessage: 'Bạn không có quyền truy cập.', message: 'Bạn không có quyền truy cập.' })
    expect((await get('/api/billing/invoices')).status).toBe(401)
    expect(counts()).toEqual(before)
    const admin = await loginCookie(gateway, 'admin', 'admin123')
    const allowed = await get('/api/billing/invoices', { cookie: admin })
    expect(allowed.echoed!.url).toBe('/b/invoices')
    expect(allowed.echoed!.headers.authorization).toBe(`Bearer ${lastToken()}`)
    expect(allowed.echoed!.headers['x-billing-tenant']).toBe('north')
    expect(counts()).toEqual({ ...before, billing: before.billing + 1 })
  })

  it('the default /api/** is as the contract says: APP_API_PROXY_TARGET, the token when signed in, none otherwise', async () => {
    const before = counts()
    const anonymous = await get('/api/billingx/1', { authorization: 'Bearer forged' })
    expect(anonymous.echoed!.url).toBe('/d/billingx/1')
    expect(anonymous.echoed!.headers.authorization).toBeUndefined()
    const cookie = await loginCookie(gateway, 'sale', 'sale123')
    const signedIn = await get('/api/orderz', { cookie })
    expect(signedIn.echoed!.url).toBe('/d/orderz')
    expect(signedIn.echoed!.headers.authorization).toBe(`Bearer ${lastToken()}`)
    expect(counts()).toEqual({ ...before, default: before.default + 2 })
  })
})

describe('routes file: path spellings never cross routes', () => {
  // Written under billing (a user route that checks permissions) and under cms (public): the hostile corpus, and
  // spellings aimed at the other route. Each is refused with 400 and reaches no backend at all.
  const crossing = [
    '/api/cms/../billing/invoices', '/api/cms/%2e%2e/billing/invoices', '/api/cms/..%2fbilling/invoices', '/api/cms/..;/billing',
    '/api/cms\\..\\billing', '/api/cms%2F..%2Fbilling/x', '/api//billing/invoices', '/api/billing;x/invoices', '/api/BILLING/invoices',
    '/api/Billing', '/api/billing%2Finvoices', '/api/billing\\invoices', '/api/%62illing/invoices', '/api/billing%3F/../cms',
    '/api/billing/../../orders', '/api/orders/public/../x', '/api/orders/PUBLIC/menu', '/api/orders//public/menu',
  ]
  // Characters past Latin-1 (fullwidth dots) go on the wire as their UTF-8 escapes: Node's client refuses them raw.
  const onTheWire = (path: string) => path.replace(/[\u0100-\uFFFF]/g, character => encodeURIComponent(character))
  const corpus = REFUSED_PATHS.filter(url => url.startsWith('/api/')).flatMap(url => [`/api/billing${url.slice(4)}`, `/api/cms${url.slice(4)}`].map(onTheWire))

  it(`refuses ${crossing.length + corpus.length} spellings with 400, and no backend counts a request`, async () => {
    const admin = await loginCookie(gateway, 'viewer', 'viewer123')
    const before = counts()
    const answers: Record<string, number> = {}
    for (const path of [...crossing, ...corpus]) answers[path] = (await get(path, { cookie: admin })).status
    expect(answers).toEqual(Object.fromEntries([...crossing, ...corpus].map(path => [path, 400])))
    expect(counts()).toEqual(before)
  })
})

describe('routes file: WebSocket tunnels per route', () => {
  const wsUrl = (path: string) => `${gateway.url.replace(/^http/, 'ws')}${path}`
  function open(url: string, headers: Record<string, string> = {}): Promise<WebSocket | number> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers })
      ws.once('open', () => resolve(ws))
      ws.once('unexpected-response', (_req, res) => {
        res.resume()
        resolve(res.statusCode!)
      })
      ws.once('error', reject)
    })
  }

  it('tunnels to the route\'s backend with its token; a route without tunnels answers 404 before any backend', async () => {
    const cookie = await loginCookie(gateway, 'admin', 'admin123')
    const token = lastToken()
    const before = backends.live.handshakes.length
    const ws = await open(wsUrl('/api/live/echo?room=1'), { cookie, origin: gateway.url })
    expect(ws).toBeInstanceOf(WebSocket)
    const echoed = new Promise<string>(resolve => (ws as WebSocket).once('message', data => resolve(String(data))))
    ;(ws as WebSocket).send('xin chào')
    expect(await echoed).toBe('xin chào')
    ;(ws as WebSocket).close()
    expect(backends.live.handshakes.slice(before).map(h => [h.url, h.headers.authorization, h.headers.cookie])).toEqual([['/echo?room=1', `Bearer ${token}`, undefined]])
    // The user route refuses a handshake without a session, and billing takes no tunnels: neither reaches a backend.
    const counted = counts()
    expect(await open(wsUrl('/api/live/echo'), { origin: gateway.url })).toBe(401)
    expect(await open(wsUrl('/api/billing/events'), { cookie, origin: gateway.url })).toBe(404)
    expect(backends.live.handshakes.length).toBe(before + 1)
    expect(counts()).toEqual(counted)
  })
})

describe('routes file: observed per route', () => {
  it('the access line and the metrics carry the route\'s name (the file\'s names and default)', async () => {
    await get('/api/cms/x')
    await get('/api/other')
    await expect.poll(() => logEntries(gateway.stdout()).filter(line => line.type === 'access' && line.group === 'api').map(line => [line.path, line.route]), { timeout: 10_000 }).toEqual(expect.arrayContaining([['/api/cms/x', 'cms'], ['/api/other', 'default']]))
    const samples = await scrape(metricsPort)
    expect(samples.get('svc_gateway_route_requests_total{route="cms",status_class="2xx"}')).toBeGreaterThanOrEqual(1)
    expect(samples.get('svc_gateway_route_requests_total{route="default",status_class="2xx"}')).toBeGreaterThanOrEqual(1)
    expect(samples.get('svc_gateway_route_requests_total{route="billing",status_class="4xx"}')).toBeGreaterThanOrEqual(1)
    expect(samples.get('svc_gateway_route_duration_seconds_count{route="cms"}')).toBeGreaterThanOrEqual(1)
    expect([...samples.keys()].filter(name => name.startsWith('svc_gateway_route_')).map(name => /route="([^"]+)"/.exec(name)![1]).every(name => ['orders', 'orders-public', 'billing', 'cms', 'live', 'reports', 'default'].includes(name!))).toBe(true)
  })

  it('/readyz checks every route\'s backend, by name (a backend down never makes it fail)', async () => {
    const answer = await rawRequest(`${gateway.url}/readyz`)
    expect(answer.status).toBe(200)
    const { checks } = JSON.parse(answer.body) as { checks: Record<string, unknown> }
    expect(checks).toMatchObject({ backend: 'up', backendPool: 'ok', routes: { 'orders': 'up', 'orders-public': 'up', 'billing': 'up', 'cms': 'up', 'live': 'up', 'reports': 'down' } })
  })

  it('a backend that does not answer is 502 for its route only', async () => {
    expect((await get('/api/reports/daily')).status).toBe(502)
    expect((await get('/api/cms/still-up')).status).toBe(200)
  })
})

describe('routes file: checked at start', () => {
  it.each([
    ['resource.yaml', 'routes:\n  - name: billing\n    prefix: /api/billing\n    target: http://127.0.0.1:9\n    resource: https://billing.example\n', /APP_API_ROUTES_FILE: tuyến #1 \('billing'\), trường resource: token theo audience chỉ dùng được khi đăng nhập bằng OpenID Provider \(APP_AUTH_KIND=oidc\)/],
    ['typo.json', '{"routes":[{"name":"orders","prefix":"/api/orders","target":"http://127.0.0.1:9","permission":["/a"]}]}', /APP_API_ROUTES_FILE: tuyến #1 \('orders'\), trường permission: không có trường này/],
    ['broken.yaml', 'routes:\n  - name: [\n', /APP_API_ROUTES_FILE: tệp .*broken\.yaml không phải YAML hợp lệ: /],
    ['missing.yaml', null, /APP_API_ROUTES_FILE: không đọc được tệp .*missing\.yaml \(ENOENT\)\./],
  ])('%s stops the start with exit 1, naming the entry and the field', async (name, text, message) => {
    const file = join(dir, name)
    if (text !== null) writeFileSync(file, text)
    const { code, output } = await runGatewayToExit({ APP_SESSION_SECRET: TEST_SECRET, APP_AUTH_MOCK: 'true', APP_API_ROUTES_FILE: file })
    expect(code).toBe(1)
    expect(output).toMatch(message)
    expect(output).not.toMatch(/at .*\.mjs/)
  })
})

describe('routes file: connections, uploads and time limits per route', () => {
  it('each route its own pool (503 past APP_API_POOL_WAIT on the full one, the others answered at once), a stalled upload cut (408), its own timeout (504)', async () => {
    const file = routesFile('limits.yaml', `
routes:
  - name: slow
    prefix: /api/slow
    target: ${backends.cms.url}/s
    token: none
  - name: quick
    prefix: /api/quick
    target: ${backends.cms.url}/q
    token: none
  - name: brief
    prefix: /api/brief
    target: ${backends.cms.url}/t
    token: none
    timeout: 500
`)
    const limitedMetrics = await freePort()
    const limited = await stack.gatewayWith({ APP_API_ROUTES_FILE: file, APP_API_PROXY_CONNECTIONS: '2', APP_API_POOL_WAIT: '1', APP_API_BODY_IDLE_TIMEOUT: '2', APP_API_PROXY_TIMEOUT: '30000', APP_METRICS_PORT: String(limitedMetrics) })
    // Two requests the backend never answers hold slow's two connections.
    const holding = new AbortController()
    const held = [0, 1].map(() => fetch(`${limited.url}/api/slow/hang`, { signal: holding.signal }).catch(() => undefined))
    await expect.poll(async () => (await rawRequest(`${limited.url}/readyz`)).body, { timeout: 10_000 }).toContain('"backendPool":"saturated"')
    // Each route's pool in the metrics, by name: slow's full, the others' idle (made on first use or not).
    const pools = await scrape(limitedMetrics)
    expect(['slow', 'quick', 'brief'].map(route => [route, pools.get(`svc_gateway_route_connections_busy{route="${route}"}`), pools.get(`svc_gateway_route_connections_max{route="${route}"}`), pools.get(`svc_gateway_route_pool_waiting{route="${route}"}`)]))
      .toEqual([['slow', 2, 2, 0], ['quick', 0, 2, 0], ['brief', 0, 2, 0]])
    const [full, other, fallback] = await Promise.all([
      rawRequest(`${limited.url}/api/slow/x`),
      rawRequest(`${limited.url}/api/quick/x`),
      rawRequest(`${limited.url}/api/x`),
    ])
    expect([full.status, JSON.parse(full.body).statusMessage, full.headers['retry-after']]).toEqual([503, 'Máy chủ API đang bận. Vui lòng thử lại sau giây lát.', '1'])
    expect([other.status, fallback.status]).toEqual([200, 200])

    // An upload that stops moving on a route is cut at APP_API_BODY_IDLE_TIMEOUT, as on the default route.
    const stalled = await rawConnectionRequest(limited, 'POST /api/quick/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: 1000000\r\n\r\nhello')
    expect(stalled.status).toBe(408)
    expect(JSON.parse(stalled.body).statusMessage).toBe('Hết thời gian chờ dữ liệu gửi lên.')

    // brief's backend may stay silent 500 ms, whatever APP_API_PROXY_TIMEOUT (30 s) says.
    const started = Date.now()
    const timedOut = await rawRequest(`${limited.url}/api/brief/hang`)
    expect([timedOut.status, JSON.parse(timedOut.body).statusMessage]).toEqual([504, 'Máy chủ API không phản hồi.'])
    expect(Date.now() - started).toBeLessThan(10_000)
    holding.abort()
    await Promise.all(held)
    await limited.stop()
  })
})

/** Sends `head` (and a few body bytes) on a raw connection, then nothing; resolves with the answer once it closes. */
function rawConnectionRequest(at: RunningGateway, head: string): Promise<{ status: number, body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(at.port, '127.0.0.1')
    let text = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      text += chunk
    })
    socket.on('error', reject)
    socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), body: text.slice(text.indexOf('\r\n\r\n') + 4) }))
    socket.write(head)
  })
}
