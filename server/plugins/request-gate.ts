import { randomUUID } from 'node:crypto'
import { Socket } from 'node:net'
import { defineNitroPlugin } from 'nitropack/runtime'
import { contractRoute, probeOf } from '../core/contract-routes'
import { acceptedRequestId } from '../core/forwarding'
import { isApiPath, routerPath } from '../core/route-match'
import { proxyApiRequest } from '../utils/api-proxy'
import { crossOriginRefusal } from '../utils/cross-origin'
import { GatewayError, MESSAGES, sendGatewayError } from '../utils/gateway-error'
import { answerProbe } from '../utils/probes'
import { observeRequest } from '../utils/request-observer'
import { useApiDecider } from '../utils/route-decider'
import { applyServerTimeouts } from '../utils/server-timeouts'
import { isShuttingDown } from '../utils/shutdown'

const done = Promise.resolve()

/**
 * The gateway's gate, ahead of all of Nitro's per-request work (hooks, route rules, middleware, router):
 * 0. a request id (the client's `X-Request-Id` when it is sane) on every answer, the access line and the metrics;
 *    /healthz and /readyz answered here, outside every rule below;
 * 1. the cross-origin rule for every unsafe request, whatever its path and spelling;
 * 2. 405 for a contract route called with a method it does not have (HEAD is served as GET);
 * 3. /api/**: the streaming proxy, unless Nitro's router would give the path to a route of the app (that route wins);
 *    another spelling of an app route's path (`/api//health`, `/api/health;x`) is refused, never proxied.
 * Every decision is taken on the path Nitro's router sees (see core/route-match.ts). Proxied requests skip Nitro's
 * route rules and middleware (the README says so). Internal calls without a socket (SSR $fetch) are server code:
 * they keep Nitro's normal path.
 */
export default defineNitroPlugin((nitroApp) => {
  const decideApi = useApiDecider()
  const handler = nitroApp.h3App.handler
  nitroApp.h3App.handler = (event) => {
    const { req, res } = event.node
    if (!(req.socket instanceof Socket)) return handler(event)
    applyServerTimeouts(req.socket)
    const path = routerPath(req.url ?? '/')
    const contract = contractRoute(path)
    const api = !contract && isApiPath(path)
    const probe = contract || api ? undefined : probeOf(path)
    const requestId = acceptedRequestId(req.headers['x-request-id']) ?? randomUUID()
    event.context.requestId = requestId
    const method = req.method ?? 'GET'
    const decision = api ? decideApi(path, method.toLowerCase()) : undefined
    const refusal = crossOriginRefusal(req)
    // A proxied answer carries the id in the proxy's one writeHead (Node's fast path: a response with no header set
    // before writeHead takes the object as it is); every other answer gets it here.
    if (decision !== 'proxy' || refusal) res.setHeader('x-request-id', requestId)
    if (isShuttingDown()) res.setHeader('connection', 'close')
    const exchange = observeRequest(req, res, requestId, contract?.group ?? (api ? 'api' : probe ? 'probe' : 'page'))

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
