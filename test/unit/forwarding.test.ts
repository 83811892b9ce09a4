import { describe, expect, it } from 'vitest'
import { AUTH_REQUEST_HEADERS } from '../../server/core/verify/forward-auth'
import { acceptedRequestId, backendRequestHeaders, backendUpgradeHeaders, browserResponseHeaders, clientInfo } from '../../server/core/http/forwarding'

const context = { targetHost: 'backend:9000', forwardedFor: '10.0.0.9', clientIp: '10.0.0.9', proto: 'https', host: 'gw.example', requestId: 'rid-1' }

describe('backendRequestHeaders', () => {
  it('drops cookies, client Authorization, hop-by-hop headers and those named in Connection', () => {
    const headers = backendRequestHeaders({
      'host': 'gw.example',
      'cookie': 'svc_session=v1.a.b.c; other=1',
      'authorization': 'Bearer forged',
      'proxy-authorization': 'Basic x',
      'connection': 'keep-alive, X-Secret-Hop',
      'keep-alive': 'timeout=5',
      'te': 'trailers',
      'trailer': 'x',
      'transfer-encoding': 'chunked',
      'upgrade': 'websocket',
      'x-secret-hop': '1',
      'expect': '100-continue',
      'content-type': 'application/json',
      'content-length': '12',
      'accept': 'application/json',
      'x-custom': 'kept',
      'x-forwarded-for': '6.6.6.6',
    }, context)
    expect(headers).toEqual({
      'content-type': 'application/json',
      'content-length': '12',
      'accept': 'application/json',
      'x-custom': 'kept',
      'host': 'backend:9000',
      'x-forwarded-for': '10.0.0.9',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'gw.example',
      'x-real-ip': '10.0.0.9',
      'x-request-id': 'rid-1',
    })
  })

  it('drops every client-address header the gateway does not set itself, and sets X-Real-IP', () => {
    const spoofed = {
      'forwarded': 'for=6.6.6.6', 'x-real-ip': '6.6.6.6', 'true-client-ip': '6.6.6.6', 'x-client-ip': '6.6.6.6',
      'cf-connecting-ip': '6.6.6.6', 'fastly-client-ip': '6.6.6.6', 'x-cluster-client-ip': '6.6.6.6', 'x-forwarded-port': '1',
      'x-forwarded-prefix': '/evil', 'x-forwarded-server': 'evil', 'x-original-url': '/admin', 'x-rewrite-url': '/admin',
      'x-original-forwarded-for': '6.6.6.6',
    }
    const headers = backendRequestHeaders(spoofed, context)
    for (const name of Object.keys(spoofed)) if (name !== 'x-real-ip') expect(headers[name]).toBeUndefined()
    expect(headers['x-real-ip']).toBe('10.0.0.9')
  })
  it('drops every header /auth/verify tells a service behind forward auth, and X-Forwarded-Uri/-Method', () => {
    const spoofed = Object.fromEntries([...AUTH_REQUEST_HEADERS, 'x-forwarded-uri', 'x-forwarded-method'].map(name => [name, 'spoofed']))
    expect(Object.keys(spoofed)).toHaveLength(6)
    const headers = backendRequestHeaders(spoofed, context)
    for (const name of Object.keys(spoofed)) expect(headers[name], name).toBeUndefined()
    for (const name of Object.keys(spoofed)) expect(backendUpgradeHeaders(spoofed, context)[name], name).toBeUndefined()
  })
  it('drops a client\'s traceparent and tracestate unless the trace context is trusted (APP_OTEL_TRUST_INCOMING)', () => {
    const traced = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'vendor=chosen', accept: '*/*' }
    for (const headers of [backendRequestHeaders(traced, context), backendUpgradeHeaders(traced, context), backendRequestHeaders(traced, { ...context, trustTraceContext: false })]) {
      expect(headers.traceparent).toBeUndefined()
      expect(headers.tracestate).toBeUndefined()
      expect(headers.accept).toBe('*/*')
    }
    expect(backendRequestHeaders(traced, { ...context, trustTraceContext: true })).toMatchObject(traced)
    expect(backendUpgradeHeaders(traced, { ...context, trustTraceContext: true })).toMatchObject(traced)
  })
  it('sets Bearer <token> only when a live token is given', () => {
    expect(backendRequestHeaders({}, { ...context, accessToken: 'abc' }).authorization).toBe('Bearer abc')
    expect(backendRequestHeaders({ authorization: 'Bearer forged' }, context).authorization).toBeUndefined()
  })
})

describe('browserResponseHeaders', () => {
  it('keeps the backend headers (several Set-Cookie included) but hop-by-hop ones, and adds the request id', () => {
    expect(browserResponseHeaders({
      'content-type': 'text/plain',
      'set-cookie': ['a=1', 'b=2'],
      'connection': 'close, x-hop',
      'x-hop': '1',
      'transfer-encoding': 'chunked',
      'keep-alive': 'timeout=5',
      'www-authenticate': 'Bearer',
    }, 'rid')).toEqual({
      headers: { 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'], 'www-authenticate': 'Bearer', 'x-request-id': 'rid' },
      droppedCookies: 0,
    })
  })

  it('drops a backend Set-Cookie for the gateway\'s own cookies, whatever its case and spacing', () => {
    expect(browserResponseHeaders({
      'set-cookie': ['svc_session=forged; Path=/', 'a=1', ' SVC_DEVICE = x', 'svc_session_other=1', 'svc_idle=99999999999999; Path=/'],
    }, 'rid')).toEqual({ headers: { 'set-cookie': ['a=1', 'svc_session_other=1'], 'x-request-id': 'rid' }, droppedCookies: 3 })
    expect(browserResponseHeaders({ 'set-cookie': 'svc_session=forged' }, 'rid')).toEqual({ headers: { 'x-request-id': 'rid' }, droppedCookies: 1 })
  })

  it('drops a nameless backend Set-Cookie, which a browser would send back as its bare value (svc_session=x)', () => {
    expect(browserResponseHeaders({
      'set-cookie': ['=svc_session=x; Path=/', ' =svc_device=y', 'svc_session', 'svc_session; Path=/', '=', 'a=1', 'b=; Path=/'],
    }, 'rid')).toEqual({ headers: { 'set-cookie': ['a=1', 'b=; Path=/'], 'x-request-id': 'rid' }, droppedCookies: 5 })
  })
})

describe('acceptedRequestId', () => {
  it.each([
    ['abc-123', 'abc-123'], ['9f1c7e1e-5b1a-4c59-9a55-1c2f4d0f2e10', '9f1c7e1e-5b1a-4c59-9a55-1c2f4d0f2e10'],
    ['', undefined], ['a b', undefined], ['x'.repeat(129), undefined], ['<script>', undefined], [undefined, undefined],
  ])('%j -> %j', (input, expected) => {
    expect(acceptedRequestId(input)).toBe(expected)
  })
})

describe('clientInfo', () => {
  const headers = { 'host': 'gw.internal:3000', 'x-forwarded-for': '1.1.1.1, 2.2.2.2, 3.3.3.3', 'x-forwarded-host': 'gw.example', 'x-forwarded-proto': 'https' }
  it('believes nothing without trusted proxies', () => {
    expect(clientInfo(headers, '9.9.9.9', false, 0)).toEqual({ ip: '9.9.9.9', forwardedFor: '9.9.9.9', proto: 'http', host: 'gw.internal:3000', viaTrustedProxy: false })
  })
  it('takes the Nth address from the right with N proxies', () => {
    expect(clientInfo(headers, '9.9.9.9', false, 1)).toEqual({ ip: '3.3.3.3', forwardedFor: '1.1.1.1, 2.2.2.2, 3.3.3.3, 9.9.9.9', proto: 'https', host: 'gw.example', viaTrustedProxy: true })
    expect(clientInfo(headers, '9.9.9.9', false, 2).ip).toBe('2.2.2.2')
    expect(clientInfo(headers, '9.9.9.9', false, 5).ip).toBe('1.1.1.1')
  })
  it('believes only an address that parses as an IP address', () => {
    const spoofed = (value: string) => clientInfo({ 'x-forwarded-for': value }, '9.9.9.9', false, 1).ip
    expect(spoofed('x'.repeat(15_000))).toBe('9.9.9.9')
    expect(spoofed('1.1.1.1, evil')).toBe('9.9.9.9')
    expect(spoofed('1.1.1.1, 999.1.1.1')).toBe('9.9.9.9')
    expect(spoofed('1.1.1.1, 2001:db8::1')).toBe('2001:db8::1')
    expect(spoofed('::ffff:5.5.5.5')).toBe('5.5.5.5')
  })
  it('falls back to the socket when no X-Forwarded-For came', () => {
    expect(clientInfo({ host: 'h' }, '9.9.9.9', true, 1)).toEqual({ ip: '9.9.9.9', forwardedFor: '9.9.9.9', proto: 'https', host: 'h', viaTrustedProxy: true })
  })
  it('takes only IP addresses in node:net\'s spelling, IPv4-mapped ones as IPv4', () => {
    const spoofed = (value: string) => clientInfo({ 'x-forwarded-for': value }, '9.9.9.9', false, 1).ip
    expect(spoofed('2130706433')).toBe('9.9.9.9')
    expect(spoofed('127.1')).toBe('9.9.9.9')
    expect(spoofed('::FFFF:5.5.5.5')).toBe('5.5.5.5')
    expect(spoofed(' 5.5.5.5 ,, ')).toBe('5.5.5.5')
  })
})

describe('clientInfo with a list of trusted proxy addresses (APP_TRUST_PROXY=10.0.0.0/8,loopback)', () => {
  const trusted = ['10.0.0.0/8', 'loopback'] as const
  const headers = { 'host': 'gw.internal:3000', 'x-forwarded-for': '6.6.6.6, 203.0.113.7, 10.1.1.1', 'x-forwarded-host': 'gw.example', 'x-forwarded-proto': 'https' }
  it('walks back through the trusted hops to the first address that is not one of them', () => {
    expect(clientInfo(headers, '127.0.0.1', false, trusted)).toEqual({ ip: '203.0.113.7', forwardedFor: '6.6.6.6, 203.0.113.7, 10.1.1.1, 127.0.0.1', proto: 'https', host: 'gw.example', viaTrustedProxy: true })
    expect(clientInfo(headers, '::ffff:10.9.9.9', false, trusted).ip).toBe('203.0.113.7')
  })
  it('believes nothing, X-Forwarded-Host and -Proto included, from a peer that is not a trusted proxy', () => {
    expect(clientInfo(headers, '198.51.100.4', false, trusted)).toEqual({ ip: '198.51.100.4', forwardedFor: '198.51.100.4', proto: 'http', host: 'gw.internal:3000', viaTrustedProxy: false })
  })
  it('takes the leftmost address when every hop is trusted, and the socket when that one is not an IP address', () => {
    expect(clientInfo({ 'x-forwarded-for': '10.2.2.2, 10.1.1.1' }, '127.0.0.1', false, trusted).ip).toBe('10.2.2.2')
    expect(clientInfo({ 'x-forwarded-for': 'evil, 10.1.1.1' }, '127.0.0.1', false, trusted).ip).toBe('127.0.0.1')
  })
  it('stops at an entry that is not an IP address (it is never a trusted hop)', () => {
    expect(clientInfo({ 'x-forwarded-for': '10.2.2.2, evil, 10.1.1.1' }, '127.0.0.1', false, trusted).ip).toBe('127.0.0.1')
  })
})

describe('clientInfo on a dual-stack socket', () => {
  it('reports IPv4 clients without the ::ffff: prefix', () => {
    expect(clientInfo({}, '::ffff:10.1.2.3', false, 0).ip).toBe('10.1.2.3')
    expect(clientInfo({}, '::1', false, 0).ip).toBe('::1')
  })
})

describe('backendUpgradeHeaders', () => {
  it('keeps what a WebSocket handshake needs and applies every proxy rule', () => {
    const headers = backendUpgradeHeaders({
      'host': 'gw.example',
      'connection': 'Upgrade',
      'upgrade': 'websocket',
      'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
      'sec-websocket-version': '13',
      'sec-websocket-protocol': 'chat',
      'sec-websocket-extensions': 'permessage-deflate',
      'cookie': 'svc_session=abc',
      'authorization': 'Bearer forged',
      'origin': 'https://gw.example',
    }, { ...context, accessToken: 'tok' })
    expect(headers).toEqual({
      'host': 'backend:9000',
      'connection': 'upgrade',
      'upgrade': 'websocket',
      'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
      'sec-websocket-version': '13',
      'sec-websocket-protocol': 'chat',
      'sec-websocket-extensions': 'permessage-deflate',
      'origin': 'https://gw.example',
      'authorization': 'Bearer tok',
      'x-forwarded-for': '10.0.0.9',
      'x-real-ip': '10.0.0.9',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'gw.example',
      'x-request-id': 'rid-1',
    })
  })
})
