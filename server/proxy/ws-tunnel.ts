import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { Socket } from 'node:net'
import { backendUpgradeHeaders, browserResponseHeaders, forwardContext } from '../core/http/forwarding'
import { isSameOriginHandshake } from '../core/http/origin-check'
import { decideApiRequest, isApiPath, routerPath, type RouteDecider } from '../core/http/route-match'
import { rateLimitAddress } from '../core/limits/rate-limit'
import { backendPath } from '../core/proxy/api-path'
import { OpenSlots } from '../core/proxy/open-slots'
import { rawErrorResponse, rawResponseHead } from '../core/proxy/raw-response'
import { readSingleCookie, SESSION_COOKIE } from '../core/session/cookie'
import { countExchange, writeAccessLine } from '../http/access'
import { GatewayError, MESSAGES, toGatewayError } from '../http/errors'
import { requestIdOf, unscopedClient } from '../http/scope'
import { useGatewayConfig } from '../ops/config'
import { isShuttingDown, workStarted } from '../ops/drain'
import { throttledWarning } from '../ops/throttled-warning'
import { endRequestSpan, failSpan, pathOf, startCallSpan, startRequestSpan } from '../ops/tracing/spans'
import { useTracing } from '../ops/tracing/holder'
import { openLiveSession } from '../session/cookie'
import { resealLines } from '../session/idle'
import { sessionToken } from '../session/token'
import { runProxyRequestHooks } from './hooks'
import { routeOf, routeRefusal } from './routes'
import { joinSockets } from './tunnels'

/** Tunnels open, and handshakes under way, per session id and per client address (APP_WS_MAX_PER_*). */
const slots = new OpenSlots()
const warnCapped = throttledWarning()

/** The contract's JSON error on a raw socket, then the socket is closed. */
function refuse(socket: Socket, error: GatewayError, requestId: string): void {
  if (socket.destroyed) return
  closeWhenWritten(socket)
  socket.end(rawErrorResponse(error.statusCode, error.statusMessage, requestId, error.headers))
}

/** The server's sockets are half-open: once the answer is out, the connection is closed without waiting for the client. */
function closeWhenWritten(socket: Socket): void {
  socket.once('finish', () => socket.destroy())
}

/** 504 when the backend did not answer the handshake in time, 502 for every other failure to reach it. */
function handshakeFailure(error: unknown): GatewayError {
  return (error as { code?: string } | null)?.code === 'ETIMEDOUT' ? new GatewayError(504, MESSAGES.apiTimeout) : new GatewayError(502, MESSAGES.apiUnreachable)
}

/**
 * The gateway's rules for a handshake that goes to one of the app's own WebSocket routes (outside the tunnel): none
 * once the drain has begun (503), none from another origin than this one or an APP_TRUSTED_ORIGINS one (403).
 * Answered here with the contract's JSON error, and true; false when the app's route may take it.
 */
export function refusedAppHandshake(req: IncomingMessage, socket: Socket): boolean {
  const { config } = useGatewayConfig()
  const error = isShuttingDown()
    ? new GatewayError(503, MESSAGES.shuttingDown)
    : isSameOriginHandshake(req.headers.origin, unscopedClient(req).host, config.trustedOrigins) ? undefined : new GatewayError(403, MESSAGES.crossOrigin)
  if (error) refuse(socket, error, requestIdOf(req))
  return !!error
}

/** Whether a handshake is the tunnel's to take: under /api, on a path no route of the app owns (its other spellings included). */
export function tunnelsUpgrade(req: IncomingMessage, decide: RouteDecider): boolean {
  const path = routerPath(req.url ?? '/')
  return isApiPath(path) && decideApiRequest(decide, path, 'get') !== 'route'
}

/**
 * A WebSocket handshake (an HTTP upgrade request) that reached the server. Under /api/** (no app route owning the
 * path), from this origin, an APP_TRUSTED_ORIGINS one or no browser: sent to the backend with the proxy's header rules;
 * its 101 joins the two sockets (pipes: backpressure both ways; an end, close or error on one side ends both);
 * any other answer goes back as it is. Everything else gets the contract's JSON error. With tracing on, the
 * handshake is a server span (`GET api`, ended with the tunnel, as its access line) and the backend's handshake a
 * client span (`websocket handshake`), whose traceparent the backend receives.
 */
export function handleUpgrade(req: IncomingMessage, socket: Socket, head: Buffer, decide: RouteDecider): void {
  const started = performance.now()
  const requestId = requestIdOf(req)
  const { config } = useGatewayConfig()
  const client = unscopedClient(req)
  const method = req.method ?? 'GET'
  let status = 0
  let routeName: string | undefined
  const ended = workStarted()
  const tracing = useTracing()
  const span = tracing && startRequestSpan(tracing, { method, url: req.url ?? '/', headers: req.headers, group: 'api', scheme: client.proto, client: client.ip }, config.otelTrustIncoming)
  socket.on('error', () => socket.destroy())
  socket.once('close', () => {
    ended()
    if (span) endRequestSpan(span, status)
    countExchange('api', method, status, undefined, routeName)
    writeAccessLine({
      method,
      url: req.url,
      status,
      seconds: (performance.now() - started) / 1000,
      bytes: socket.bytesWritten,
      requestId,
      client: client.ip,
      group: 'api',
      route: routeName,
      tunnelBytesIn: status === 101 ? socket.bytesRead : undefined,
      span,
    })
  })
  const fail = (error: GatewayError) => {
    // Once an answer has started (the backend's, or a 101), a later failure can only close the connection.
    if (status !== 0) return void socket.destroy()
    status = error.statusCode
    refuse(socket, error, requestId)
  }

  const path = routerPath(req.url ?? '/')
  if (isShuttingDown()) return fail(new GatewayError(503, MESSAGES.shuttingDown))
  if (!isApiPath(path)) return fail(new GatewayError(404, MESSAGES.webSocketNotFound))
  if (String(req.headers.upgrade).toLowerCase() !== 'websocket' || method !== 'GET') return fail(new GatewayError(400, MESSAGES.upgradeUnsupported))
  const decision = decideApiRequest(decide, path, 'get')
  if (decision === 'refuse') return fail(new GatewayError(400, MESSAGES.apiPathInvalid))
  if (decision === 'route') return fail(new GatewayError(404, MESSAGES.webSocketNotFound))
  if (!isSameOriginHandshake(req.headers.origin, client.host, config.trustedOrigins)) return fail(new GatewayError(403, MESSAGES.crossOrigin))
  const target = routeOf(req.url ?? '/')
  if (target instanceof GatewayError) return fail(target)
  if (target.labelled) routeName = target.name
  // A route that takes no tunnels answers as a path without one.
  if (!target.websocket) return fail(new GatewayError(404, MESSAGES.webSocketNotFound))
  const backendUrl = backendPath(req.url ?? '', target.basePath, target.prefix)
  if (backendUrl === null) return fail(new GatewayError(400, MESSAGES.apiPathInvalid))

  const cookie = readSingleCookie(req.headers.cookie, SESSION_COOKIE)
  const session = cookie ? openLiveSession(cookie) : null
  // The handshake slides the idle timeout when due: the new cookie goes out on its answer (101 or the backend's refusal).
  const slide = session ? resealLines(cookie!, session) : undefined
  const withSlide = (headers: Record<string, string | string[]>) => (slide ? { ...headers, 'set-cookie': [...[headers['set-cookie'] ?? []].flat(), ...slide] } : headers)
  // A slot per session and per client address, from the handshake on (a burst cannot slip past), given back when the
  // client's connection closes (a refused handshake) or the tunnel ends, whichever side ended it.
  // An address is counted as the brute-force limits count it (IPv6 by its /64).
  const { perSession, perClient } = config.webSocketLimits
  const byClient = [`c:${rateLimitAddress(client.ip)}`, perClient] as const
  const release = slots.take(session ? [[`s:${session.sid}`, perSession], byClient] : [byClient])
  if (!release) {
    warnCapped(`WebSocket: từ chối bắt tay vượt giới hạn (APP_WS_MAX_PER_SESSION ${perSession}, APP_WS_MAX_PER_CLIENT ${perClient}).`)
    return fail(new GatewayError(429, MESSAGES.tooManyTunnels))
  }
  if (socket.destroyed) return release()
  socket.once('close', release)
  // The session's token: at once, or (an OpenID session's first use here, a renewal) when it comes; a guarded route's
  // check (401, 403) first; a route with token `none` sends none, and its tunnel does not end with the session.
  const openBackend = (token: string | undefined) => {
    const refusal = target.guarded ? routeRefusal(target, session, token) : undefined
    if (refusal) return fail(refusal)
    const sent = target.token === 'none' ? undefined : token
    const headers = backendUpgradeHeaders(req.headers, forwardContext(client, target.host, requestId, sent, config.otelTrustIncoming))
    if (target.headers) Object.assign(headers, target.headers)
    try {
      runProxyRequestHooks(headers, req)
    }
    catch (error) {
      return fail(toGatewayError(error))
    }
    const handshake = span && startCallSpan(span, 'websocket handshake', () => ({ 'http.request.method': 'GET', 'server.address': target.host, 'url.path': pathOf(backendUrl) }), headers)

    const backendRequest = (target.protocol === 'https:' ? httpsRequest : httpRequest)({
      host: target.hostname,
      port: target.port || undefined,
      path: backendUrl,
      method: 'GET',
      headers,
      agent: false,
      timeout: target.timeoutMs,
    })
    const onClientGone = () => backendRequest.destroy()
    socket.once('close', onClientGone)
    backendRequest.once('timeout', () => backendRequest.destroy(Object.assign(new Error('handshake timeout'), { code: 'ETIMEDOUT' })))
    backendRequest.on('error', (error) => {
      if (handshake) {
        failSpan(handshake, error)
        handshake.end()
      }
      fail(handshakeFailure(error))
    })
    // Any other answer (401, 403, 404, ...) goes back as it is, then the connection closes.
    backendRequest.once('response', (response) => {
      socket.off('close', onClientGone)
      status = response.statusCode ?? 502
      handshake?.setAttribute('http.response.status_code', status)
      handshake?.end()
      const { headers: out } = browserResponseHeaders(response.headers as IncomingHttpHeaders, requestId)
      socket.write(rawResponseHead(status, withSlide({ ...out, connection: 'close' })))
      closeWhenWritten(socket)
      response.on('error', () => socket.destroy())
      response.pipe(socket)
      socket.once('close', () => response.destroy())
    })
    backendRequest.once('upgrade', (response, backendSocket: Socket, backendHead: Buffer) => {
      socket.off('close', onClientGone)
      handshake?.setAttribute('http.response.status_code', 101)
      handshake?.end()
      if (socket.destroyed) return void backendSocket.destroy()
      status = 101
      const { headers: out } = browserResponseHeaders(response.headers as IncomingHttpHeaders, requestId)
      socket.write(rawResponseHead(101, withSlide({ ...out, connection: 'Upgrade', upgrade: response.headers.upgrade ?? 'websocket' })))
      joinSockets(socket, head, backendSocket, backendHead, target.token === 'none' ? null : session, release)
    })
    backendRequest.end()
  }
  const token = sessionToken(session, target.audience, span)
  if (token instanceof Promise) {
    token.then(value => socket.destroyed || openBackend(value), (error: unknown) => fail(toGatewayError(error)))
    return
  }
  openBackend(token)
}
