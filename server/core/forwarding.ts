/** Which headers cross the /api proxy, and the client's address behind reverse proxies. Pure. */
import type { IncomingHttpHeaders } from 'node:http'
import { isIP } from 'node:net'

/** Hop-by-hop headers (RFC 9110 7.6.1) and the ones the proxy replaces; never forwarded to the backend. */
const REQUEST_DROPPED = new Set([
  'connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'proxy-authorization', 'proxy-connection',
  'host', 'cookie', 'authorization', 'expect', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-request-id',
  // Client-address headers a backend may believe (Spring, chi): only the gateway sets them (X-Real-IP, X-Forwarded-*).
  'forwarded', 'x-real-ip', 'true-client-ip', 'x-client-ip', 'cf-connecting-ip', 'fastly-client-ip', 'x-cluster-client-ip',
  'x-forwarded-port', 'x-forwarded-prefix', 'x-forwarded-server', 'x-original-url', 'x-rewrite-url', 'x-original-forwarded-for',
])

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
export function forwardContext(client: ClientInfo, targetHost: string, requestId: string, accessToken: string | undefined): ForwardContext {
  return { targetHost, forwardedFor: client.forwardedFor, clientIp: client.ip, proto: client.proto, host: client.host, requestId, accessToken }
}

/** The headers sent to the backend. */
export function backendRequestHeaders(incoming: IncomingHttpHeaders, context: ForwardContext): Record<string, string | string[]> {
  const headers = withoutHopHeaders(incoming, REQUEST_DROPPED)
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
const GATEWAY_COOKIE = /^\s*(svc_session|svc_device)\s*=/i

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
}

/** An IP address without a dual-stack '::ffff:' prefix for IPv4 clients. */
function plainIp(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address
}

/**
 * The client as seen through `trustProxy` reverse proxies: the Nth address from the right of X-Forwarded-For
 * (the leftmost when there are fewer), and X-Forwarded-Host/-Proto believed. Without trust: the socket.
 * A believed address that is not an IP address is not believed: the socket's address is the client's.
 */
export function clientInfo(headers: IncomingHttpHeaders, socketAddress: string, encrypted: boolean, trustProxy: number): ClientInfo {
  const socketIp = plainIp(socketAddress)
  const direct = { ip: socketIp, forwardedFor: socketIp, proto: encrypted ? 'https' : 'http', host: headers.host ?? '' }
  if (trustProxy <= 0) return direct
  const chain = String(headers['x-forwarded-for'] ?? '').split(',').map(part => part.trim()).filter(Boolean)
  const first = (value: string | string[] | undefined) => String(value ?? '').split(',')[0]!.trim()
  const believed = chain.length ? plainIp(chain[Math.max(0, chain.length - trustProxy)]!) : socketIp
  return {
    ip: isIP(believed) ? believed : socketIp,
    forwardedFor: chain.length ? `${chain.join(', ')}, ${socketIp}` : socketIp,
    proto: first(headers['x-forwarded-proto']) || direct.proto,
    host: first(headers['x-forwarded-host']) || direct.host,
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
