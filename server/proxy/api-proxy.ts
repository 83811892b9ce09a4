/**
 * proxy/: the ways to the backend. The /api/** stream (this file), the routes of the routes file (routes.ts), their
 * backend connections (backend-pool.ts) and upload rules (upload-guard.ts), the WebSocket tunnel (ws-tunnel.ts, its open tunnels in tunnels.ts;
 * dev-tunnel.ts under `nuxt dev`), and the app's onProxyRequest hooks (hooks.ts). A proxied request's token is the
 * session's (session/token.ts), whatever the IAM.
 * May import: core, ops, http, stores, session. Never iam/, oidc/ or verify/.
 */
import type { IncomingMessage, IncomingHttpHeaders, ServerResponse } from 'node:http'
import type { Readable } from 'node:stream'
import type { Dispatcher } from 'undici'
import { backendRequestHeaders, browserResponseHeaders, forwardContext, type ClientInfo } from '../core/http/forwarding'
import { routerPath } from '../core/http/route-match'
import { rateLimitAddress } from '../core/limits/rate-limit'
import { backendPath } from '../core/proxy/api-path'
import { readSingleCookie, SESSION_COOKIE } from '../core/session/cookie'
import { challengedNeed } from '../core/session/auth-level'
import type { SessionPayload } from '../core/session/seal'
import { GatewayError, MESSAGES, sendGatewayError, toGatewayError } from '../http/errors'
import { proxiedRuleHeaders } from '../http/route-decider'
import type { Exchange } from '../http/scope'
import { useGatewayConfig } from '../ops/config'
import { statusClass } from '../ops/metric-series'
import { useMetrics } from '../ops/metrics'
import { throttledWarning } from '../ops/throttled-warning'
import { failSpan, pathOf, startCallSpan } from '../ops/tracing/spans'
import { openLiveSession } from '../session/cookie'
import { resealLines } from '../session/idle'
import { sessionToken } from '../session/token'
import { runProxyRequestHooks } from './hooks'
import { routeOf, routeRefusal, type BackendRoute } from './routes'
import { answerStepUp, unmetStepUp } from './step-up'
import { BodyIdleError, idleLimitedBody, takeUploadSlot } from './upload-guard'

/** Whether the request carries a body to stream (declared length above 0, or chunked). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length']
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
}

/** What the proxy needs of a request's scope (gate/gate.ts). */
export interface ProxiedScope {
  /** The request id, sent to the backend and on the answer. */
  id: string
  /** The client as believed (X-Forwarded-For, X-Real-IP, X-Forwarded-Proto and -Host). */
  client: ClientInfo
  /** The gate's follower of the request: the proxy's clean-up runs from its one 'close' listener. */
  exchange?: Exchange
}

/** A backend tried to set the gateway's own cookies: dropped, and said in the log at most once a minute. */
const warnGatewayCookies = throttledWarning()

/**
 * Proxies one request under /api to its route's backend (proxy/routes.ts: a route of APP_API_ROUTES_FILE, else
 * APP_API_PROXY_TARGET), streaming both bodies with backpressure: cookies and any client Authorization are dropped; a
 * live session's token is sent as 'Bearer <token>' (its route audience's on a route with `resource` / `scope`; never on
 * a route with token `none`; a route with token `user` or permissions answers 401 or 403 itself, before the backend).
 * The backend's status, headers and body come back unchanged, with `X-Request-Id: id`. Never throws: errors are
 * written as the contract's JSON. What is left to do when the answer is finished or the client has gone runs from
 * the request gate's `exchange` (one 'close' listener a request), or from a 'close' listener of its own without one.
 */
export function proxyApiRequest(req: IncomingMessage, res: ServerResponse, scope: ProxiedScope): void {
  const { id } = scope
  const { config } = useGatewayConfig()
  const url = req.url ?? '/'
  const ruleHeaders = proxiedRuleHeaders?.(routerPath(url))
  const backend = routeOf(url)
  if (backend instanceof GatewayError) return answerError(res, id, backend)
  if (backend.labelled && scope.exchange) scope.exchange.route = backend.name
  const path = backendPath(url, backend.basePath, backend.prefix)
  if (path === null) return answerError(res, id, new GatewayError(400, MESSAGES.apiPathInvalid))
  if (hasBody(req) && !holdUploadSlot(req, res, scope.client.ip, config.apiUploads.perClient)) {
    // At the cap: a body already whole once Node has parsed what came with the headers (a small JSON body, sent with
    // them) cannot stall and goes on; one still arriving is refused before the backend.
    setImmediate(() => {
      if (res.destroyed) return
      if (req.complete) return sendWithSession(req, res, scope, backend, path, ruleHeaders)
      useMetrics()?.proxyRefusals.inc({ reason: 'uploads_per_client' })
      answerError(res, id, new GatewayError(429, MESSAGES.tooManyUploads, { 'retry-after': '1', 'connection': 'close' }))
    })
    return
  }
  sendWithSession(req, res, scope, backend, path, ruleHeaders)
}

/** Sends the request on with the token of its session, as its route says (see proxyApiRequest). */
function sendWithSession(req: IncomingMessage, res: ServerResponse, scope: ProxiedScope, backend: BackendRoute, path: string, ruleHeaders: Record<string, string> | undefined): void {
  const { id } = scope
  // A public route without permissions never reads the session: nothing of it is sent.
  if (backend.token === 'none' && !backend.guarded) return forwardToBackend(req, res, scope, backend, path, ruleHeaders, undefined)
  // Two svc_session values (one planted by a sibling subdomain): no session.
  const cookie = readSingleCookie(req.headers.cookie, SESSION_COOKIE)
  const session = cookie ? openLiveSession(cookie) : null
  const token = sessionToken(session, backend.audience, scope.exchange?.span)
  // The request slides the idle timeout when due: the new cookie goes out with the answer's head, whenever it comes.
  const slide = session ? resealLines(cookie!, session) : undefined
  // An OpenID session's token on its first use here, or being renewed: the request waits for it (its body unread).
  if (token instanceof Promise) {
    // A client gone meanwhile gets nothing sent on (its exchange has ended: nothing would count the stream's end).
    token.then(value => res.destroyed || sendAs(req, res, scope, backend, path, ruleHeaders, session, value, slide), (error: unknown) => answerError(res, id, toGatewayError(error), slide))
    return
  }
  sendAs(req, res, scope, backend, path, ruleHeaders, session, token, slide)
}

/** The route's own check (401, 403) when it has one, then the request goes on with the token its rule sends. */
function sendAs(req: IncomingMessage, res: ServerResponse, scope: ProxiedScope, backend: BackendRoute, path: string, ruleHeaders: Record<string, string> | undefined, session: SessionPayload | null, token: string | undefined, slide: string[] | undefined): void {
  const refusal = backend.guarded ? routeRefusal(backend, session, token) : undefined
  if (refusal) return answerError(res, scope.id, refusal, slide)
  const stepUp = token !== undefined && backend.token !== 'none' ? unmetStepUp(backend.stepUp, session) : undefined
  if (stepUp) return answerStepUp(req, res, scope.id, stepUp, slide)
  forwardToBackend(req, res, scope, backend, path, ruleHeaders, backend.token === 'none' ? undefined : token, slide)
}

/**
 * Takes one of the client address's body slots until the body is in or the exchange ends; false when it has
 * APP_API_UPLOADS_PER_CLIENT bodies in flight already.
 */
function holdUploadSlot(req: IncomingMessage, res: ServerResponse, ip: string, limit: number): boolean {
  const release = takeUploadSlot(rateLimitAddress(ip), limit)
  if (!release) return false
  req.once('end', release)
  res.once('close', release)
  return true
}

/** Sends the request on to the backend's `path` with the session's token (see proxyApiRequest), when the pool lets it. */
function forwardToBackend(req: IncomingMessage, res: ServerResponse, scope: ProxiedScope, backend: BackendRoute, path: string, ruleHeaders: Record<string, string> | undefined, token: string | undefined, slide?: string[]): void {
  const { id, client, exchange } = scope
  const { config } = useGatewayConfig()
  const { origin, host, timeoutMs } = backend
  const headers = backendRequestHeaders(req.headers, forwardContext(client, host, id, token, config.otelTrustIncoming))
  if (backend.headers) Object.assign(headers, backend.headers)

  try {
    runProxyRequestHooks(headers, req)
  }
  catch (error) {
    return answerError(res, id, toGatewayError(error), slide) // the app's hook failed: a 500 in the contract's form, logged without a stack
  }

  // Tracing on: the backend call's client span, whose traceparent the backend receives.
  const span = exchange?.span && startCallSpan(exchange.span, `backend ${req.method}`, () => ({ 'http.request.method': req.method ?? 'GET', 'server.address': host, 'url.path': pathOf(path) }), headers)
  const metrics = useMetrics()
  const { agent, turnstile } = backend.pool()
  const started = performance.now()
  let answered = false
  let admitted = false
  let leaveQueue = (): void => {}
  let controller: Dispatcher.DispatchController | undefined
  let waitingForDrain = false
  let steppingUp = false
  if (metrics) metrics.live.streams++
  const ended = () => {
    if (!res.writableFinished) controller?.abort(new Error('client closed'))
    // An answer that went out before the whole body came in (the backend failed or answered early): the rest is read
    // and dropped, as Node does with a body no handler reads. Left unread, it would hold up the kept-alive
    // connection's next request until the keep-alive timeout resets the connection.
    else if (!req.complete && !req.destroyed) req.on('data', dropChunk)
    // The connection goes to the next request waiting for one (after an abort above has freed it).
    if (admitted) turnstile.release()
    else leaveQueue()
    span?.end()
    if (metrics) {
      metrics.live.streams--
      if (!answered) metrics.backendDuration.observe('none', (performance.now() - started) / 1000)
    }
  }
  if (exchange) exchange.onEnd = ended
  else res.on('close', ended)
  const handler: Dispatcher.DispatchHandler = {
    onRequestStart(dispatchController) {
      controller = dispatchController
      if (res.destroyed) dispatchController.abort(new Error('client closed'))
    },
    onResponseStart(_controller, statusCode, responseHeaders, statusMessage) {
      // Interim answers (103 Early Hints, ...): dropped, the final answer follows on the same exchange.
      if (statusCode < 200) return
      answered = true
      span?.setAttribute('http.response.status_code', statusCode)
      metrics?.backendDuration.observe(statusClass(statusCode), (performance.now() - started) / 1000)
      // A backend's RFC 9470 challenge to an OpenID session: the step-up answer instead (its own body is dropped).
      const challenge = statusCode === 401 && token !== undefined && config.oidc ? challengedNeed(responseHeaders['www-authenticate'] as string | string[] | undefined) : undefined
      if (challenge) {
        steppingUp = true
        return answerStepUp(req, res, id, challenge, slide)
      }
      const { headers: out, droppedCookies } = browserResponseHeaders(responseHeaders as IncomingHttpHeaders, id)
      // The app's route rules `headers` for this path, as Nitro sets them before a handler: the backend's own win.
      if (ruleHeaders) for (const name in ruleHeaders) out[name] ??= ruleHeaders[name]!
      if (droppedCookies) warnGatewayCookies(`máy chủ API đặt cookie svc_session/svc_device/svc_idle (${droppedCookies} dòng Set-Cookie): đã bỏ.`)
      if (slide) out['set-cookie'] = out['set-cookie'] === undefined ? slide : [...[out['set-cookie']].flat(), ...slide]
      try {
        res.writeHead(statusCode, statusMessage || undefined, out)
      }
      catch {
        res.writeHead(statusCode, out) // a reason phrase Node refuses: keep the standard one
      }
    },
    onResponseData(dispatchController, chunk) {
      if (steppingUp) return
      // A slow client: the backend waits (undici stops reading its socket) until the answer drains.
      if (!res.write(chunk) && !waitingForDrain) {
        waitingForDrain = true
        dispatchController.pause()
        res.once('drain', () => {
          waitingForDrain = false
          dispatchController.resume()
        })
      }
    },
    onResponseEnd() {
      if (!steppingUp) res.end()
    },
    onResponseError(_controller, error) {
      if (error instanceof BodyIdleError) metrics?.proxyRefusals.inc({ reason: 'body_idle' })
      if (span) failSpan(span, error)
      if (res.headersSent) res.destroy(error)
      else if (!res.destroyed) answerError(res, id, backendFailure(error), slide)
    },
  }
  // An upload that stops moving is cut: the backend request aborted (408 when nothing was answered yet).
  const body = hasBody(req) ? idleLimitedBody(req, config.apiUploads.idleMs, () => controller?.abort(new BodyIdleError())) : null
  const dispatch = () => {
    admitted = true
    try {
      agent.dispatch({
        origin,
        path,
        method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
        headers,
        // Async iterables are a documented dispatch body (Dispatcher.md); undici's type list lags behind.
        body: body as unknown as Readable | null,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      }, handler)
    }
    catch (error) {
      answerError(res, id, backendFailure(error), slide)
    }
  }
  if (turnstile.tryEnter()) return dispatch()
  leaveQueue = turnstile.admit(dispatch, () => {
    metrics?.proxyRefusals.inc({ reason: 'pool_wait' })
    const seconds = String(Math.ceil(turnstile.waitMs / 1000))
    answerError(res, id, new GatewayError(503, MESSAGES.apiBusy, { 'retry-after': seconds }), slide)
  })
}

/** A request body chunk nobody needs any more. */
function dropChunk(): void {}

/** An error answer of the proxy, with the request id (the gate leaves the proxy's answers to set it), and the session slid when due. */
function answerError(res: ServerResponse, id: string, error: GatewayError, slide?: string[]): void {
  if (!res.headersSent) res.setHeader('x-request-id', id)
  if (slide && !res.headersSent) res.setHeader('set-cookie', slide)
  sendGatewayError(res, error)
}

/** 408 for an upload that stopped moving, 504 when the backend did not answer in time, 502 for every other failure to reach it. */
function backendFailure(error: unknown): GatewayError {
  if (error instanceof BodyIdleError) return new GatewayError(408, MESSAGES.bodyTimeout, { connection: 'close' })
  const code = (error as { code?: string } | null)?.code
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return new GatewayError(504, MESSAGES.apiTimeout)
  return new GatewayError(502, MESSAGES.apiUnreachable)
}
