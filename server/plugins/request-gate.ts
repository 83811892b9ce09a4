import { randomUUID } from 'node:crypto'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { defineNitroPlugin } from 'nitropack/runtime'
import { contractRoute, probeOf, type ContractRoute } from '../core/contract-routes'
import { acceptedRequestId } from '../core/forwarding'
import { isApiPath, routerPath, type ApiDecision } from '../core/route-match'
import { serveAheadOfNitro } from '../utils/ahead-of-nitro'
import { proxyApiRequest } from '../utils/api-proxy'
import { crossOriginRefusal } from '../utils/cross-origin'
import { GatewayError, MESSAGES, sendGatewayError, toGatewayError } from '../utils/gateway-error'
import type { RouteGroup } from '../utils/metrics'
import { answerProbe } from '../utils/probes'
import { observeRequest } from '../utils/request-observer'
import { useApiDecider } from '../utils/route-decider'
import { applyServerTimeouts } from '../utils/server-timeouts'
import { isShuttingDown } from '../utils/shutdown'

const done = Promise.resolve()

/** What the gate decides on, taken on the path Nitro's router sees. */
interface GateView {
  contract: ContractRoute | undefined
  api: boolean
  probe: 'healthz' | 'readyz' | undefined
  /** Only for /api paths: proxy, an app route, or refused (another spelling of an app route's path). */
  decision: ApiDecision | undefined
  refusal: GatewayError | undefined
}

/** The view of a request that the listener ahead of Nitro looked at and left to Nitro (taken once). */
const VIEW = Symbol('svc-gateway-view')
type ViewedRequest = IncomingMessage & { [VIEW]?: GateView }

/**
 * The gateway's gate, ahead of all of Nitro's per-request work (hooks, route rules, middleware, router):
 * 0. a request target that is not a path (absolute form, `*`) is 400, echoing nothing;
 *    a request id (the client's `X-Request-Id` when it is sane) on every answer, the access line and the metrics;
 *    /healthz and /readyz answered here, outside every rule below;
 * 1. the cross-origin rule for every unsafe request, whatever its path and spelling;
 * 2. 405 for a contract route called with a method it does not have (HEAD is served as GET);
 * 3. /api/**: the streaming proxy, unless Nitro's router would give the path to a route of the app (that route wins);
 *    another spelling of an app route's path (`/api//health`, `/api/health;x`) is refused, never proxied.
 * Every decision is taken on the path Nitro's router sees (see core/route-match.ts). Proxied requests skip Nitro's
 * route rules and middleware (the README says so); from a server's first request on, they are served by a listener
 * ahead of Nitro's own (utils/ahead-of-nitro.ts), without h3's event. Internal calls without a socket (SSR $fetch)
 * are server code: they keep Nitro's normal path.
 */
export default defineNitroPlugin((nitroApp) => {
  const decideApi = useApiDecider()
  const handler = nitroApp.h3App.handler

  const look = (req: IncomingMessage): GateView => {
    const path = routerPath(req.url ?? '/')
    const contract = contractRoute(path)
    const api = !contract && isApiPath(path)
    return {
      contract,
      api,
      probe: contract || api ? undefined : probeOf(path),
      decision: api ? decideApi(path, (req.method ?? 'GET').toLowerCase()) : undefined,
      refusal: crossOriginRefusal(req),
    }
  }

  /** The request id, the headers every answer gets, and the observation to the end (access line, metrics). */
  const begin = (req: IncomingMessage, res: ServerResponse, view: GateView, group: RouteGroup) => {
    const requestId = acceptedRequestId(req.headers['x-request-id']) ?? randomUUID()
    // A proxied answer carries the id in the proxy's one writeHead (Node's fast path: a response with no header set
    // before writeHead takes the object as it is); every other answer gets it here.
    if (view.decision !== 'proxy' || view.refusal) res.setHeader('x-request-id', requestId)
    if (isShuttingDown()) res.setHeader('connection', 'close')
    return { requestId, exchange: observeRequest(req, res, requestId, group) }
  }

  /** Ahead of Nitro: a request to proxy is served here; any other is left to Nitro with its view. */
  const serveProxied = (req: IncomingMessage, res: ServerResponse): boolean => {
    let view: GateView
    try {
      view = look(req)
    }
    catch {
      return false // Nitro's path looks again, and answers whatever failed with its own error handling
    }
    if (view.decision !== 'proxy' || view.refusal) {
      (req as ViewedRequest)[VIEW] = view
      return false
    }
    try {
      const { requestId, exchange } = begin(req, res, view, 'api')
      proxyApiRequest(req, res, requestId, exchange)
    }
    catch (error) {
      // Out here nothing catches for us (a throw would end the process): the 500 h3 would have answered, logged.
      sendGatewayError(res, toGatewayError(error))
    }
    return true
  }

  nitroApp.h3App.handler = (event) => {
    const { req, res } = event.node
    if (!(req.socket instanceof Socket)) return handler(event)
    applyServerTimeouts(req.socket)
    serveAheadOfNitro((req.socket as Socket & { server?: Server }).server, serveProxied)
    const view = (req as ViewedRequest)[VIEW] ?? look(req)
    const { contract, api, probe, decision, refusal } = view
    const { requestId, exchange } = begin(req, res, view, contract?.group ?? (api ? 'api' : probe ? 'probe' : 'page'))
    event.context.requestId = requestId
    const method = req.method ?? 'GET'
    // Only origin-form targets ('/path'): an absolute-form one (`GET http://other.test/x`) is no path of ours, and
    // nothing of it is echoed.
    if (req.url?.[0] !== '/') {
      sendGatewayError(res, new GatewayError(400, MESSAGES.requestTargetInvalid, { connection: 'close' }))
      return done
    }

    if (probe) return answerProbe(probe, req, res)
    if (refusal) {
      sendGatewayError(res, refusal)
      return done
    }
    if (contract) {
      if (!contract.methods.includes(method)) {
        sendGatewayError(res, new GatewayError(405, MESSAGES.methodNotAllowed, { allow: contract.methods.join(', ') }))
        return done
      }
      // h3's router has no HEAD fallback (HEAD /auth/session would reach the page renderer); Node sends no body.
      if (method === 'HEAD' && !contract.methods.includes('POST')) req.method = 'GET'
      return handler(event)
    }
    if (decision === undefined || decision === 'route') return handler(event)
    if (decision === 'refuse') {
      sendGatewayError(res, new GatewayError(400, MESSAGES.apiPathInvalid))
      return done
    }
    proxyApiRequest(req, res, requestId, exchange)
    return done
  }
})
