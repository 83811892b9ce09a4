import { Socket } from 'node:net'
import { defineNitroPlugin } from 'nitropack/runtime'
import { contractMethods } from '../core/contract-routes'
import { decideApiRequest, isApiPath, routerPath } from '../core/route-match'
import { proxyApiRequest } from '../utils/api-proxy'
import { refuseCrossOrigin } from '../utils/cross-origin'
import { GatewayError, MESSAGES, sendGatewayError } from '../utils/gateway-error'
import { useRouteDecider } from '../utils/route-decider'
import { applyServerTimeouts } from '../utils/server-timeouts'

const done = Promise.resolve()

/**
 * The gateway's gate, ahead of all of Nitro's per-request work (hooks, route rules, middleware, router):
 * 1. the cross-origin rule for every unsafe request, whatever its path and spelling;
 * 2. 405 for a contract route called with a method it does not have (HEAD is served as GET);
 * 3. /api/**: the streaming proxy, unless Nitro's router would give the path to a route of the app (that route wins);
 *    another spelling of an app route's path (`/api//health`, `/api/health;x`) is refused, never proxied.
 * Every decision is taken on the path Nitro's router sees (see core/route-match.ts). Proxied requests skip Nitro's
 * route rules and middleware (the README says so). Internal calls without a socket (SSR $fetch) are server code:
 * they keep Nitro's normal path.
 */
export default defineNitroPlugin((nitroApp) => {
  const decide = useRouteDecider()
  const handler = nitroApp.h3App.handler
  nitroApp.h3App.handler = (event) => {
    const { req, res } = event.node
    if (!(req.socket instanceof Socket)) return handler(event)
    applyServerTimeouts(req.socket)
    if (refuseCrossOrigin(req, res)) return done
    const path = routerPath(req.url ?? '/')
    const method = req.method ?? 'GET'
    const allowed = contractMethods(path)
    if (allowed) {
      if (!allowed.includes(method)) {
        sendGatewayError(res, new GatewayError(405, MESSAGES.methodNotAllowed, { allow: allowed.join(', ') }))
        return done
      }
      // h3's router has no HEAD fallback (HEAD /auth/session would reach the page renderer); Node sends no body.
      if (method === 'HEAD' && !allowed.includes('POST')) req.method = 'GET'
      return handler(event)
    }
    if (!isApiPath(path)) return handler(event)
    const decision = decideApiRequest(decide, path, method.toLowerCase())
    if (decision === 'route') return handler(event)
    if (decision === 'refuse') {
      sendGatewayError(res, new GatewayError(400, MESSAGES.apiPathInvalid))
      return done
    }
    return proxyApiRequest(req, res)
  }
})
