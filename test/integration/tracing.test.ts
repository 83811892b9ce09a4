import { randomBytes } from 'node:crypto'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { AUTHENTICATOR_OTP } from '../../dev/iam.mjs'
import { logEntries, SERVER_ENTRY, type RunningGateway } from '../support/gateway'
import { postLogin, sessionCookieOf } from '../support/login'
import { cookieAgent, logInWithProvider, untilTokenAge, useOidcStack } from '../support/oidc'
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver'
import { rawRequest } from '../support/raw-http'
import { useStack, type WsBackend } from '../support/stack'
import { startWsBackend } from '../support/ws-backend'

// One OTLP/HTTP receiver for the file; every gateway below exports to it (OTLP's JSON encoding), in batches 50 ms apart.
let receiver: OtlpReceiver
const otel: Record<string, string> = {}
beforeAll(async () => {
  receiver = await startOtlpReceiver()
  Object.assign(otel, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_SERVICE_NAME: 'gateway-under-test' })
})
afterAll(() => receiver?.close())

const stack = useStack({ redis: true })
// The development provider's access tokens live 4 s: a renewal is due in their last second.
const oidc = useOidcStack({ provider: { accessTokenTtl: 4 }, env: otel })

let gateway: RunningGateway
let trusting: RunningGateway
let tunnelling: RunningGateway
let wsBackend: WsBackend
// The first gateway runs from a copy of the build outside the repository, as it is deployed: the export thread must
// find the OpenTelemetry packages it loads in the build alone (.output/server/node_modules).
const deployed = mkdtempSync(join(tmpdir(), 'gateway-output-'))
afterAll(() => rmSync(deployed, { recursive: true, force: true }))
beforeAll(async () => {
  wsBackend = await startWsBackend()
  cpSync(dirname(dirname(SERVER_ENTRY)), deployed, { recursive: true })
  ;[gateway, trusting, tunnelling] = await Promise.all([
    stack.gatewayWith({ ...otel, APP_REDIS_URL: stack.redis.url }, join(deployed, 'server/index.mjs')),
    stack.gatewayWith({ ...otel, APP_OTEL_TRUST_INCOMING: 'true' }),
    stack.gatewayWith({ ...otel, APP_API_PROXY_TARGET: wsBackend.url }),
  ])
})
afterAll(() => wsBackend?.close())

/** Every value the tests sent or were given that must never reach a span: searched for in every exported byte. */
const secrets = new Set<string>()
const keep = (...values: Array<string | undefined>) => values.forEach(value => value && secrets.add(value))

const SERVER = 2
const CLIENT = 3
const INTERNAL = 1

/** The spans of one trace, and a finder by name. */
const inTrace = (spans: ReceivedSpan[], traceId: string) => spans.filter(span => span.traceId === traceId)
const parentOf = (spans: ReceivedSpan[], span: ReceivedSpan) => spans.find(other => other.spanId === span.parentSpanId)
/** The server span of the request with this path (url.path: the path without its query). */
const serverSpan = (path: string) => (spans: ReceivedSpan[]) => spans.find(span => span.kind === SERVER && span.attributes['url.path'] === path)
/** A traceparent header's parts. */
function traceparentOf(value: unknown): { traceId: string, parentId: string, flags: string } {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(String(value))
  if (!match) throw new Error(`not a traceparent: ${String(value)}`)
  return { traceId: match[1]!, parentId: match[2]!, flags: match[3]! }
}

describe('tracing with the contract IAM (OTEL_EXPORTER_OTLP_ENDPOINT set)', () => {
  it('a login is a server span whose login span holds the IAM calls (and the limiter\'s Redis calls); its access and audit lines carry the ids', async () => {
    const answer = await postLogin(gateway, { username: 'otp.app', password: 'otp123', method: 'authenticator', otp: AUTHENTICATOR_OTP }, { 'x-request-id': 'trace-login-1' })
    expect(answer.status).toBe(200)
    keep('otp123', AUTHENTICATOR_OTP, sessionCookieOf(answer).split('=')[1])
    const server = await receiver.waitFor(spans => spans.find(span => span.kind === SERVER && span.attributes['http.route'] === 'login' && span.attributes['http.request.method'] === 'POST'))
    const trace = await receiver.waitFor(spans => inTrace(spans, server.traceId).some(span => span.name === 'iam userInfo') && inTrace(spans, server.traceId))
    expect(server).toMatchObject({ name: 'POST login', parentSpanId: '', service: 'gateway-under-test' })
    expect(server.attributes).toMatchObject({ 'http.request.method': 'POST', 'url.path': '/auth/login', 'http.route': 'login', 'http.response.status_code': 200 })
    const login = trace.find(span => span.name === 'login')!
    expect(login).toMatchObject({ kind: INTERNAL, parentSpanId: server.spanId })
    expect(login.attributes['svc_gateway.outcome']).toBe('success')
    for (const name of ['iam login', 'iam userInfo']) {
      const call = trace.find(span => span.name === name)!
      expect(call).toMatchObject({ kind: CLIENT, parentSpanId: login.spanId })
      expect(call.attributes).toMatchObject({ 'http.request.method': expect.any(String), 'http.response.status_code': 200, 'server.address': new URL(stack.iam.url).host })
    }
    const redis = trace.filter(span => span.name.startsWith('redis '))
    expect(redis.length).toBeGreaterThan(0)
    for (const span of redis) expect(span).toMatchObject({ kind: CLIENT, attributes: { 'db.system.name': 'redis' } })

    const line = (type: string) => logEntries(gateway.stdout()).find(entry => entry.type === type && entry.requestId === 'trace-login-1')
    await expect.poll(() => line('access')).toMatchObject({ traceId: server.traceId, spanId: server.spanId })
    await expect.poll(() => line('audit')).toMatchObject({ event: 'login.success', traceId: server.traceId, spanId: login.spanId })
    // Tracing started from the build alone (the copy outside the repository), and its export thread never stopped.
    const tracingLines = logEntries(gateway.stdout()).filter(entry => entry.type === 'tracing')
    expect(tracingLines.map(entry => [entry.level, entry.msg])).toEqual([['info', 'OpenTelemetry: đã bật trace (OTLP/HTTP).']])
  })

  it('a long path is cut in url.path at 2,048 characters, as in the access line', async () => {
    const long = `/api/${'x'.repeat(3000)}`
    await rawRequest(`${gateway.url}${long}`)
    const span = await receiver.waitFor(serverSpan(`${long.slice(0, 2048)}…[+${long.length - 2048}]`))
    expect(span.name).toBe('GET api')
  })

  it('a logout is a logout span holding the revocation, shared through Redis', async () => {
    const cookie = sessionCookieOf(await postLogin(gateway, { username: 'viewer', password: 'viewer123' }))
    keep('viewer123', cookie.split('=')[1])
    const answer = await rawRequest(`${gateway.url}/auth/logout`, { headers: { cookie } })
    expect(answer.status).toBe(302)
    const server = await receiver.waitFor(serverSpan('/auth/logout'))
    const trace = await receiver.waitFor(spans => inTrace(spans, server.traceId).some(span => span.name === 'redis SET') && inTrace(spans, server.traceId))
    const logout = trace.find(span => span.name === 'logout')!
    expect(logout).toMatchObject({ kind: INTERNAL, parentSpanId: server.spanId, attributes: { 'svc_gateway.outcome': 'ended', 'svc_gateway.sessions': 1 } })
    const revocation = trace.find(span => span.name === 'revocation')!
    expect(revocation).toMatchObject({ parentSpanId: logout.spanId, attributes: { 'svc_gateway.revocation.kind': 'session', 'svc_gateway.outcome': 'shared' } })
    // Its write (the revocation's key, then its announcement) within one Redis budget.
    expect(trace.find(span => span.name === 'redis SET')).toMatchObject({ kind: CLIENT, parentSpanId: revocation.spanId })
  })

  it('a proxied request\'s backend receives a traceparent whose parent is the gateway\'s client span', async () => {
    const answer = await postLogin(gateway, { username: 'admin', password: 'admin123' })
    const cookie = sessionCookieOf(answer)
    keep('admin123', cookie.split('=')[1])
    const echoed = JSON.parse((await rawRequest(`${gateway.url}/api/traced?q=1`, { headers: { cookie } })).body)
    keep(String(echoed.headers.authorization).replace(/^Bearer /, ''))
    const sent = traceparentOf(echoed.headers.traceparent)
    expect(sent.flags).toBe('01')
    const backendCall = await receiver.waitFor(spans => spans.find(span => span.spanId === sent.parentId))
    expect(backendCall).toMatchObject({ name: 'backend GET', kind: CLIENT, traceId: sent.traceId })
    expect(backendCall.attributes).toMatchObject({ 'http.request.method': 'GET', 'url.path': '/traced', 'http.response.status_code': 200 })
    const server = await receiver.waitFor(spans => parentOf(spans, backendCall))
    expect(server).toMatchObject({ name: 'GET api', kind: SERVER, traceId: sent.traceId })
    expect(server.attributes).toMatchObject({ 'url.path': '/api/traced', 'http.route': 'api', 'http.response.status_code': 200 })
  })

  it('a browser\'s traceparent and tracestate are not believed by default, and are continued with APP_OTEL_TRUST_INCOMING=true', async () => {
    const chosenTrace = randomBytes(16).toString('hex')
    const chosenParent = randomBytes(8).toString('hex')
    const incoming = `00-${chosenTrace}-${chosenParent}-01`
    for (const [target, path] of [[gateway, '/api/incoming-default'], [trusting, '/api/incoming-trusted']] as const) {
      const echoed = JSON.parse((await rawRequest(`${target.url}${path}`, { headers: { traceparent: incoming, tracestate: 'vendor=chosen' } })).body)
      const sent = traceparentOf(echoed.headers.traceparent)
      const server = await receiver.waitFor(serverSpan(path))
      if (target === gateway) {
        expect(sent.traceId).not.toBe(chosenTrace)
        expect(echoed.headers.tracestate).toBeUndefined()
        expect(server.traceId).not.toBe(chosenTrace)
        expect(server.parentSpanId).toBe('')
      }
      else {
        expect(sent.traceId).toBe(chosenTrace)
        expect(echoed.headers.tracestate).toBe('vendor=chosen')
        expect(server).toMatchObject({ traceId: chosenTrace, parentSpanId: chosenParent })
      }
      expect(server.traceId).toBe(sent.traceId)
    }
  })

  it('a WebSocket handshake: the backend\'s handshake is a client span under the tunnel\'s server span', async () => {
    const ws = new WebSocket(`${tunnelling.url.replace('http', 'ws')}/api/live/echo`)
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
    ws.close()
    const sent = traceparentOf(wsBackend.handshakes.at(-1)!.headers.traceparent)
    const handshake = await receiver.waitFor(spans => spans.find(span => span.spanId === sent.parentId))
    expect(handshake).toMatchObject({ name: 'websocket handshake', kind: CLIENT, traceId: sent.traceId, attributes: { 'url.path': '/live/echo', 'http.response.status_code': 101 } })
    const server = await receiver.waitFor(spans => parentOf(spans, handshake))
    expect(server).toMatchObject({ name: 'GET api', kind: SERVER, attributes: { 'url.path': '/api/live/echo', 'http.response.status_code': 101 } })
  })

  it('a request not sampled exports nothing, its lines carry no ids, and the backend is told it is not sampled; a trusted parent\'s decision is followed either way', async () => {
    const unsampled = await stack.gatewayWith({ ...otel, OTEL_SERVICE_NAME: 'unsampled-gateway', OTEL_TRACES_SAMPLER: 'parentbased_always_off', APP_OTEL_TRUST_INCOMING: 'true' })
    const login = await postLogin(unsampled, { username: 'sale', password: 'sale123' }, { 'x-request-id': 'unsampled-login' })
    expect(login.status).toBe(200)
    const cookie = sessionCookieOf(login)
    keep('sale123', cookie.split('=')[1])
    const echoed = JSON.parse((await rawRequest(`${unsampled.url}/api/unsampled`, { headers: { cookie, 'x-request-id': 'unsampled-api' } })).body)
    expect(traceparentOf(echoed.headers.traceparent).flags).toBe('00')
    // A parent that is not sampled: its trace goes on to the backend, not sampled, under a span id of the gateway's
    // (the request's), with the parent's tracestate.
    const [notSampledTrace, notSampledParent] = [randomBytes(16).toString('hex'), randomBytes(8).toString('hex')]
    const declined = JSON.parse((await rawRequest(`${unsampled.url}/api/unsampled-parent`, { headers: { 'x-request-id': 'unsampled-parent', 'traceparent': `00-${notSampledTrace}-${notSampledParent}-00`, 'tracestate': 'vendor=b' } })).body)
    const declinedSent = traceparentOf(declined.headers.traceparent)
    expect(declinedSent).toMatchObject({ traceId: notSampledTrace, flags: '00' })
    expect(declinedSent.parentId).not.toBe(notSampledParent)
    expect(declined.headers.tracestate).toBe('vendor=b')
    // A sampled parent: parentbased_always_off follows it, so this one request is traced.
    const [sampledTrace, sampledParent] = [randomBytes(16).toString('hex'), randomBytes(8).toString('hex')]
    const followed = JSON.parse((await rawRequest(`${unsampled.url}/api/sampled-parent`, { headers: { 'x-request-id': 'sampled-parent', 'traceparent': `00-${sampledTrace}-${sampledParent}-01` } })).body)
    expect(traceparentOf(followed.headers.traceparent)).toMatchObject({ traceId: sampledTrace, flags: '01' })
    await expect.poll(() => logEntries(unsampled.stdout()).filter(line => /^(unsampled-|sampled-parent)/.test(String(line.requestId))).length).toBeGreaterThanOrEqual(5)
    for (const line of logEntries(unsampled.stdout())) expect(line.traceId).toBe(line.requestId === 'sampled-parent' ? sampledTrace : undefined)
    await unsampled.stop()
    const exported = receiver.spans.filter(span => span.service === 'unsampled-gateway')
    expect(exported.map(span => span.name).sort()).toEqual(['GET api', 'backend GET'])
    expect(exported.find(span => span.kind === SERVER)).toMatchObject({ traceId: sampledTrace, parentSpanId: sampledParent })
    expect(exported.every(span => span.traceId === sampledTrace)).toBe(true)
  })

  it('spans still buffered go out when the gateway stops (SIGTERM), however long the batch delay', async () => {
    const patient = await stack.gatewayWith({ ...otel, OTEL_BSP_SCHEDULE_DELAY: '600000' })
    expect((await rawRequest(`${patient.url}/api/before-stop`)).status).toBe(200)
    await patient.stop()
    expect(receiver.spans.some(span => span.attributes['url.path'] === '/api/before-stop')).toBe(true)
  })
})

describe('tracing with an OpenID Provider', () => {
  const at = () => oidc.gateways[0]!.url
  const bearerOf = async (agent: ReturnType<typeof cookieAgent>, path: string) => (await (await agent.go(`${at()}${path}`)).json()).headers.authorization as string

  it('the provider\'s discovery, and a login whose span holds the token and userinfo calls', async () => {
    const discovery = await receiver.waitFor(spans => spans.find(span => span.name === 'oidc discovery' && span.service === 'gateway-under-test'))
    expect(discovery).toMatchObject({ kind: CLIENT, attributes: { 'url.path': expect.stringContaining('/.well-known/openid-configuration'), 'http.response.status_code': 200 } })
    const agent = cookieAgent()
    const { url: callback } = await logInWithProvider(agent, at(), oidc.provider.url, { username: 'sale', password: 'sale123', until: at => at.pathname === '/auth/callback' })
    keep('sale123', callback.searchParams.get('code')!)
    const { url: landed } = await agent.follow(callback)
    expect(landed.href).toBe(`${at()}/`)
    keep(...agent.jar.values())
    keep((await bearerOf(agent, '/api/after-login')).replace(/^Bearer /, ''))
    const server = await receiver.waitFor(serverSpan('/auth/callback'))
    expect(server).toMatchObject({ name: 'GET login', attributes: { 'http.route': 'login', 'http.response.status_code': 302 } })
    const trace = await receiver.waitFor(spans => inTrace(spans, server.traceId).some(span => span.name === 'oidc userinfo') && inTrace(spans, server.traceId))
    const login = trace.find(span => span.name === 'login')!
    expect(login).toMatchObject({ parentSpanId: server.spanId, attributes: { 'svc_gateway.outcome': 'success' } })
    for (const name of ['oidc token', 'oidc userinfo']) expect(trace.find(span => span.name === name)).toMatchObject({ kind: CLIENT, parentSpanId: login.spanId })
  })

  it('20 parallel requests at the expiry: one renewal span holding the one refresh call', async () => {
    const agent = cookieAgent()
    await logInWithProvider(agent, at(), oidc.provider.url, { username: 'ops', password: 'ops123' })
    keep('ops123', ...agent.jar.values())
    keep((await bearerOf(agent, '/api/renewal-warm')).replace(/^Bearer /, ''))
    await untilTokenAge(agent, 3_400) // into the token's last second: every request below needs the renewal
    const before = oidc.provider.counters.refresh_token
    const paths = Array.from({ length: 20 }, (_, index) => `/api/renewal-${index}`)
    const bearers = await Promise.all(paths.map(path => bearerOf(agent, path)))
    keep(...bearers.map(bearer => bearer.replace(/^Bearer /, '')))
    expect(oidc.provider.counters.refresh_token - before).toBe(1)
    const servers = await receiver.waitFor(spans => paths.every(path => serverSpan(path)(spans)) && paths.map(path => serverSpan(path)(spans)!))
    const traces = new Set(servers.map(span => span.traceId))
    const refreshes = receiver.spans.filter(span => span.name === 'oidc refresh' && traces.has(span.traceId))
    const renewals = receiver.spans.filter(span => span.name === 'renewal' && traces.has(span.traceId))
    expect(refreshes).toHaveLength(1)
    expect(renewals).toHaveLength(1)
    expect(renewals[0]!.attributes['svc_gateway.outcome']).toBe('renewed')
    expect(refreshes[0]).toMatchObject({ kind: CLIENT, parentSpanId: renewals[0]!.spanId })
  })
})

describe('what the spans never hold', () => {
  it('no password, OTP, authorization code, cookie value or token in any exported byte', async () => {
    // Every span out: the gateways stop (their last batch goes out at SIGTERM).
    await Promise.all([gateway.stop(), trusting.stop(), tunnelling.stop(), ...oidc.gateways.map(one => one.stop())])
    expect(secrets.size).toBeGreaterThanOrEqual(12)
    const exported = receiver.rawText()
    expect(exported.length).toBeGreaterThan(1000)
    // Ids and times are digits and hex that a short code (the OTP) could match by chance: they are left out of the search.
    const searched = exported.replace(/"(traceId|spanId|parentSpanId|startTimeUnixNano|endTimeUnixNano|timeUnixNano)":"?[0-9a-f]*"?/g, '')
    for (const secret of secrets) expect(searched.includes(secret), `a secret (${secret.slice(0, 6)}…) was exported`).toBe(false)
    // Nor a header of the requests (cookies, authorization), nor the callback's query.
    expect(exported).not.toMatch(/"(http\.request\.header|cookie|authorization)/i)
    expect(exported).not.toMatch(/[?&](code|state)=/)
  })
})
