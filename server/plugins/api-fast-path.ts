import { Socket } from 'node:net'
import { defineNitroPlugin } from 'nitropack/runtime'
// Generated at build time (see nuxt.config.ts): the app's own route patterns under /api, the proxy's catch-all left out.
import appApiRoutes from '#svc-gateway/app-api-routes'
import { compileRoutes } from '../core/route-match'
import { proxyApiRequest } from '../utils/api-proxy'
import { isGatewayPath, refuseCrossOrigin } from '../utils/cross-origin'

/**
 * Serves /api/** ahead of Nitro's per-request work (hooks, route rules, middleware, router), which costs more than the
 * proxy itself. A route file of the app for a specific /api path still wins: such paths go through Nitro as usual.
 * Nitro's own middleware does not run for proxied requests, so the cross-origin rule runs here (the request id is
 * handled by the proxy). Internal calls without a real socket (SSR $fetch) keep the normal route.
 */
export default defineNitroPlugin((nitroApp) => {
  const isAppRoute = compileRoutes(appApiRoutes)
  const handler = nitroApp.h3App.handler
  nitroApp.h3App.handler = (event) => {
    const { req, res } = event.node
    const url = req.url ?? ''
    if (!url.startsWith('/api') || !isGatewayPath(url) || !(req.socket instanceof Socket)) return handler(event)
    const queryAt = url.indexOf('?')
    if (isAppRoute(queryAt === -1 ? url : url.slice(0, queryAt))) return handler(event)
    if (refuseCrossOrigin(req, res)) return Promise.resolve()
    return proxyApiRequest(req, res)
  }
})
