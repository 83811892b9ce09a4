/** Which headers cross the /api proxy, and the client's address behind reverse proxies. Pure. */
import proxyAddr from '@fastify/proxy-addr'
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'
import type { ProxyTrust } from '../config/types'

/** Hop-by-hop headers (RFC 9110 7.6.1) and the ones the proxy replaces; never forwarded to the backend. */
const REQUEST_DROPPED = new Set([
  'connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'proxy-authorization', 'proxy-connection',
  'host', 'cookie', 'authorization', 'expect', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-request-id',
  // Client-address headers a backend may believe (Spring, chi): only the gateway sets them (X-Real-IP, X-Forwarded-*).
  'forwarded', 'x-real-ip', 'true-client-ip', 'x-client-ip', 'cf-connecting-ip', 'fastly-client-ip', 'x-cluster-client-ip',
  'x-forwarded-port', 'x-forwarded-prefix', 'x-forwarded-server', 'x-original-url', 'x-rewrite-url', 'x-original-forwarded-for',
  // What GET /auth/verify tells a service behind forward auth: a backend that trusts them never gets a client's.
  'x-auth-request-user', 'x-auth-request-user-id', 'x-auth-request-email', 'x-auth-request-roles', 'x-forwarded-uri', 'x-forwarded-method',
])

/**
 * The W3C trace context a browser sends: never believed by default (a client would choose the trace id and the
 * sampling of every traced backend behind the gateway), so dropped unless APP_OTEL_TRUST_INCOMING says the peer in
 * front is a trusted proxy. With tracing on, the gateway writes its own (ops/tracing/spans.ts startCallSpan).
 */
const REQUEST_DROPPED_WITH_TRACE_CONTEXT = new Set([...REQUEST_DROPPED, 'traceparent', 'tracestate'])

/** Hop-by-hop headers of the backend's answer. */
const RESPONSE_DROPPED = new Set(['connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'proxy-connection'])

const NO_TOKENS: ReadonlySet<string> = new Set()

/** `Connection: keep-alive`, the usual value: it names only a header that both lists drop anyway. */
const KEEP_ALIVE_ONLY = /^[\t ]*keep-alive[\t ]*$/i

/** Names listed in a Connection header (they are hop-by-hop too). */
function connectionTokens(value: string | string[] | undefined): ReadonlySet<string> {
  if (value === undefined || (typeof value === 'string' && KEEP_ALIVE_ONLY.test(value))) return NO_TOKENS
  const text = Array.isArray(value) ? value.join(',') : value ?? ''
  return new Set(text.split(',').map(token => token.trim().toLowerCase()).filter(Boolean))
}

export interface ForwardContext {
  /** host[:port] of the backend. */
  targetHost: string
  /** The whole X-Forwarded-For value to send (see clientInfo). */
  forwardedFor: string
  /** The believed client address, sent as X-Real-IP. */
  clientIp: string
  proto: string
  host: string
  requestId: string
  /** Live token, or undefined: no Authorization is sent. */
  accessToken?: string
  /** Whether the client's `traceparent` and `tracestate` go on (APP_OTEL_TRUST_INCOMING); else they are dropped. */
  trustTraceContext?: boolean
}

type HeaderMap = Record<string, string | string[] | undefined>

/** A copy of the headers without the dropped ones and those named in Connection. */
function withoutHopHeaders(incoming: HeaderMap, dropped: ReadonlySet<string>): Record<string, string | string[]> {
  const listed = connectionTokens(incoming.connection)
  const headers: Record<string, string | string[]> = {}
  for (const name in incoming) {
    const value = incoming[name]
    if (value !== undefined && !dropped.has(name) && !listed.has(name)) headers[name] = value
  }
  return headers
}

/** What the backend is told of one request: the client as believed, where it is sent, the id, the live token. */
export function forwardContext(client: ClientInfo, targetHost: string, requestId: string, accessToken: string | undefined, trustTraceContext: boolean): ForwardContext {
  return { targetHost, forwardedFor: client.forwardedFor, clientIp: client.ip, proto: client.proto, host: client.host, requestId, accessToken, trustTraceContext }
}

/** The headers sent to the backend. */
export function backendRequestHeaders(incoming: IncomingHttpHeaders, context: ForwardContext): Record<string, string | string[]> {
  const headers = withoutHopHeaders(incoming, context.trustTraceContext ? REQUEST_DROPPED : REQUEST_DROPPED_WITH_TRACE_CONTEXT)
  headers.host = context.targetHost
  headers['x-forwarded-for'] = context.forwardedFor
  headers['x-real-ip'] = context.clientIp
  headers['x-forwarded-proto'] = context.proto
  headers['x-forwarded-host'] = context.host
  headers['x-request-id'] = context.requestId
  if (context.accessToken) headers.authorization = `Bearer ${context.accessToken}`
  return headers
}

/** Cookies only the gateway sets: a backend's Set-Cookie for them never reaches the browser. */
const GATEWAY_COOKIE = /^\s*(svc_session|svc_device|svc_idle)\s*=/i

/**
 * A backend Set-Cookie the browser must not get: one of the gateway's own cookies, or a nameless one (`=svc_session=x`,
 * or no '=' before the first ';'): a browser keeps that as a cookie with an empty name, and sends it back as its bare
 * value (`Cookie: svc_session=x`), a planted gateway cookie.
 */
function isForbiddenCookie(line: string): boolean {
  if (GATEWAY_COOKIE.test(line)) return true
  const pair = line.split(';', 1)[0]!
  const equals = pair.indexOf('=')
  return equals === -1 || pair.slice(0, equals).trim() === ''
}

/** The headers of the backend's answer sent on to the browser, with the request id; `dropped` counts removed cookies (see isForbiddenCookie). */
export function browserResponseHeaders(incoming: HeaderMap, requestId: string): { headers: Record<string, string | string[]>, droppedCookies: number } {
  const headers = withoutHopHeaders(incoming, RESPONSE_DROPPED)
  headers['x-request-id'] = requestId
  let droppedCookies = 0
  const cookies = headers['set-cookie']
  if (cookies !== undefined) {
    const lines = Array.isArray(cookies) ? cookies : [cookies]
    const kept = lines.filter(line => !isForbiddenCookie(line))
    droppedCookies = lines.length - kept.length
    if (kept.length) headers['set-cookie'] = kept
    else delete headers['set-cookie']
  }
  return { headers, droppedCookies }
}

const REQUEST_ID = /^[\w.:@/+=-]{1,128}$/

/** An incoming X-Request-Id when it is short and plain, else undefined (a new one is made). */
export function acceptedRequestId(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' && REQUEST_ID.test(value) ? value : undefined
}

export interface ClientInfo {
  ip: string
  /** X-Forwarded-For to send on: the believed chain plus the socket's address, or the socket's address alone. */
  forwardedFor: string
  proto: string
  host: string
  /** Whether the peer is a trusted proxy (APP_TRUST_PROXY), so that its X-Forwarded-* headers were believed. */
  viaTrustedProxy: boolean
}

/**
 * Which reverse proxies are believed (APP_TRUST_PROXY): how many stand in front (0: none), or the addresses and
 * networks they connect from (CIDR, or proxy-addr's names `loopback`, `linklocal`, `uniquelocal`).
 */

type TrustTest = (address: string, hop: number) => boolean

const trustTests = new WeakMap<readonly string[], TrustTest>()

/** proxy-addr's test of one hop (hop 0 is the socket), made once per list; undefined when nothing is believed. */
function trustTestOf(trust: ProxyTrust): TrustTest | undefined {
  if (typeof trust === 'number') return trust > 0 ? (_address, hop) => hop < trust : undefined
  if (!trust.length) return undefined
  let test = trustTests.get(trust)
  if (!test) trustTests.set(trust, test = proxyAddr.compile([...trust]))
  return test
}

const TRUST_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal'])

/**
 * Checks an APP_TRUST_PROXY list as proxy-addr reads it, each address in node:net's strict spelling (proxy-addr
 * would take `1.5` as 1.0.0.5); throws a TypeError naming the bad entry.
 */
export function checkTrustList(list: readonly string[]): void {
  for (const entry of list) {
    if (!TRUST_NAMES.has(entry) && !isIP(entry.split('/')[0]!)) throw new TypeError(`invalid IP address: ${entry}`)
  }
  proxyAddr.compile([...list])
}

/**
 * An address in one spelling: IPv4-mapped IPv6 (`::ffff:192.0.2.1`) as IPv4, IPv6 as ipaddr.js writes it. Only what
 * node:net reads as an IP address counts (ipaddr.js alone also takes `2130706433` or `127.1`); else undefined.
 */
export function canonicalIp(address: string): string | undefined {
  const family = isIP(address)
  // The common spellings without a parse (ipaddr.js takes 1.6 µs, on every request for the socket's address).
  if (family === 4) return address
  if (family === 0) return undefined
  if (address.startsWith('::ffff:') && isIP(address.slice(7)) === 4) return address.slice(7)
  return ipaddr.process(address).toString()
}

/**
 * The client as seen through the believed reverse proxies (proxy-addr: from the socket leftwards through
 * X-Forwarded-For, as long as each hop is trusted), and X-Forwarded-Host/-Proto believed when the socket's peer is a
 * trusted proxy. A believed address that is not an IP address is not believed: the socket's address is the client's.
 */
export function clientInfo(headers: IncomingHttpHeaders, socketAddress: string, encrypted: boolean, trustProxy: ProxyTrust): ClientInfo {
  const socketIp = canonicalIp(socketAddress) ?? socketAddress
  const direct = { ip: socketIp, forwardedFor: socketIp, proto: encrypted ? 'https' : 'http', host: headers.host ?? '', viaTrustedProxy: false }
  const trust = trustTestOf(trustProxy)
  if (!trust || !trust(socketAddress, 0)) return direct
  // proxy-addr reads only these two fields of a request.
  const request = { headers, socket: { remoteAddress: socketAddress } } as IncomingMessage
  const believed = proxyAddr(request, trust)
  // Every hop, the socket first: sent on as the client's chain followed by the socket's address.
  const chain = proxyAddr.all(request).slice(1).reverse()
  const first = (value: string | string[] | undefined) => String(value ?? '').split(',')[0]!.trim()
  return {
    ip: canonicalIp(believed) ?? socketIp,
    forwardedFor: [...chain, socketIp].join(', '),
    proto: first(headers['x-forwarded-proto']) || direct.proto,
    host: first(headers['x-forwarded-host']) || direct.host,
    viaTrustedProxy: true,
  }
}

/**
 * The headers of a WebSocket handshake sent to the backend: the same rules as every proxied request (cookies and the
 * client's Authorization dropped, the live token as Bearer, X-Forwarded-*, request id), plus what the handshake needs
 * (`Connection: upgrade`, `Upgrade`; the Sec-WebSocket-* headers pass as they are).
 */
export function backendUpgradeHeaders(incoming: IncomingHttpHeaders, context: ForwardContext): Record<string, string | string[]> {
  const headers = backendRequestHeaders(incoming, context)
  headers.connection = 'upgrade'
  headers.upgrade = incoming.upgrade ?? 'websocket'
  return headers
}
