import { defineWebSocket } from 'h3'
import { parseURL } from 'ufo'
import { WebSocket } from 'undici'
import { backendRequestHeaders, forwardContext } from '../core/http/forwarding'
import { isSameOriginHandshake } from '../core/http/origin-check'
import { decideApiRequest, routerPath } from '../core/http/route-match'
import { backendPath } from '../core/proxy/api-path'
import { readSingleCookie, SESSION_COOKIE } from '../core/session/cookie'
import { GatewayError, MESSAGES } from '../http/errors'
import { useRouteDecider } from '../http/route-decider'
import { clientFrom, requestIdFrom } from '../http/scope'
import { useGatewayConfig } from '../ops/config'
import { openLiveSession } from '../session/cookie'
import { sessionToken } from '../session/token'
import { routeOf, routeRefusal } from './routes'

/** How long the backend gets to take the handshake. */
const HANDSHAKE_TIMEOUT_MS = 10_000
/** Headers of the browser's handshake that belong to its own connection (the backend one makes its own). */
const OWN_HANDSHAKE = /^sec-websocket-/

interface DevTunnelContext {
  backend?: WebSocket
  /** What the backend sent before the browser's side opened. */
  early?: (string | ArrayBuffer)[]
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** The contract's JSON error, as the answer to a refused handshake (crossws sends a thrown Response as it is). */
function refusal(error: GatewayError, requestId: string): Response {
  return new Response(JSON.stringify({ statusCode: error.statusCode, statusMessage: error.statusMessage }), {
    status: error.statusCode,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId, 'cache-control': 'no-store' },
  })
}

/** A close code the browser's side may be given (1005 and 1006 are never sent on the wire). */
function sendableCode(code: number): number {
  return code === 1000 || (code >= 3000 && code <= 4999) || (code >= 1001 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) ? code : 1011
}

/** A close code the backend's side may be given (undici takes 1000 and 3000–4999 only). */
function backendCode(code: number | undefined): number {
  return code !== undefined && code >= 3000 && code <= 4999 ? code : 1000
}

/**
 * The /api/** WebSocket tunnel under `nuxt dev`, the slower route: Nitro's development server has no 'upgrade' of the
 * gateway's own (that is server/node-server.ts, in production), so the handshake comes through Nitro's WebSocket
 * support (crossws), message by message. The same rules as production decide it (the router's path, the other
 * spellings of an app route's path, same origin, the live session's token as Bearer, the proxy's header rules); the
 * backend is connected during the handshake, so its refusal is the browser's 502. Not here: the per-session and
 * per-client caps, the end of a tunnel with its session, the app's onProxyRequest hooks, and a message's text or
 * binary kind (crossws does not pass it on: valid UTF-8 goes to the backend as text).
 */
export const devTunnel = defineWebSocket({
  async upgrade(request) {
    const incoming: Record<string, string> = {}
    request.headers.forEach((value, name) => {
      incoming[name] = value
    })
    const requestId = requestIdFrom(incoming)
    const { config } = useGatewayConfig()
    const { pathname, search } = parseURL(request.url)
    const rawUrl = pathname + search
    const fail = (error: GatewayError) => {
      throw refusal(error, requestId)
    }
    if (decideApiRequest(useRouteDecider(), routerPath(rawUrl), 'get') !== 'proxy') fail(new GatewayError(400, MESSAGES.apiPathInvalid))
    const client = clientFrom(incoming, '', false)
    if (!isSameOriginHandshake(incoming.origin, client.host, config.trustedOrigins)) fail(new GatewayError(403, MESSAGES.crossOrigin))
    const target = routeOf(rawUrl)
    if (target instanceof GatewayError) return fail(target)
    if (!target.websocket) return fail(new GatewayError(404, MESSAGES.webSocketNotFound))
    const path = backendPath(rawUrl, target.basePath, target.prefix)
    if (path === null) return fail(new GatewayError(400, MESSAGES.apiPathInvalid))
    const cookie = readSingleCookie(incoming.cookie, SESSION_COOKIE)
    const session = cookie ? openLiveSession(cookie) : null
    const token = await sessionToken(session, target.audience)
    const routeRefused = target.guarded ? routeRefusal(target, session, token) : undefined
    if (routeRefused) return fail(routeRefused)
    const forwarded = backendRequestHeaders(incoming, forwardContext(client, target.host, requestId, target.token === 'none' ? undefined : token, config.otelTrustIncoming))
    if (target.headers) Object.assign(forwarded, target.headers)
    const headers = Object.fromEntries(Object.entries(forwarded).filter(([name]) => !OWN_HANDSHAKE.test(name) && name !== 'host'))
    const protocols = (incoming['sec-websocket-protocol'] ?? '').split(',').map(part => part.trim()).filter(Boolean)
    let backend: WebSocket
    try {
      backend = new WebSocket(`${target.protocol === 'https:' ? 'wss' : 'ws'}://${target.host}${path}`, { protocols, headers: headers as Record<string, string> })
    }
    catch {
      return fail(new GatewayError(400, MESSAGES.upgradeUnsupported)) // a subprotocol list undici refuses
    }
    backend.binaryType = 'arraybuffer'
    const opened = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), HANDSHAKE_TIMEOUT_MS)
      backend.addEventListener('open', () => resolve(true), { once: true })
      backend.addEventListener('error', () => resolve(false), { once: true })
      backend.addEventListener('close', () => clearTimeout(timer), { once: true })
      backend.addEventListener('open', () => clearTimeout(timer), { once: true })
    })
    if (!opened) {
      backend.close()
      fail(new GatewayError(502, MESSAGES.apiUnreachable))
    }
    const context = request.context as DevTunnelContext
    context.backend = backend
    context.early = []
    backend.addEventListener('message', event => context.early?.push(event.data as string | ArrayBuffer))
    // A browser gone before its side opened: the backend's side is not left open, holding what it sends.
    setTimeout(() => {
      if (context.early) backend.close()
    }, HANDSHAKE_TIMEOUT_MS).unref()
    return { headers: { 'x-request-id': requestId } }
  },
  open(peer) {
    const context = peer.context as DevTunnelContext
    const backend = context.backend
    if (!backend) return peer.close(1011)
    for (const data of context.early ?? []) peer.send(data)
    context.early = undefined
    backend.addEventListener('message', event => peer.send(event.data as string | ArrayBuffer))
    backend.addEventListener('close', event => peer.close(sendableCode(event.code), event.reason))
    if (backend.readyState !== WebSocket.OPEN) peer.close(1011)
  },
  message(peer, message) {
    const backend = (peer.context as DevTunnelContext).backend
    if (backend?.readyState !== WebSocket.OPEN) return
    const bytes = message.uint8Array()
    let text: string | undefined
    try {
      text = utf8.decode(bytes)
    }
    catch { /* not UTF-8: binary */ }
    backend.send(text ?? bytes)
  },
  close(peer, details) {
    const backend = (peer.context as DevTunnelContext).backend
    if (backend && backend.readyState <= WebSocket.OPEN) backend.close(backendCode(details.code), details.reason)
  },
  error(peer) {
    (peer.context as DevTunnelContext).backend?.close()
  },
})
