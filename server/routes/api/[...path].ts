import { defineEventHandler } from 'h3'
import { routerPath } from '../../core/http/route-match'
import { GatewayError, MESSAGES, sendGatewayError } from '../../http/errors'
import { useApiDecider } from '../../http/route-decider'
import { requestIdOf, requestScope, unscopedClient } from '../../http/scope'
import { proxyApiRequest } from '../../proxy/api-proxy'
import { devTunnel } from '../../proxy/dev-tunnel'

/**
 * Any method on /api/**: the streaming proxy to APP_API_PROXY_TARGET. A more specific route of the app wins.
 * The gateway's server (server/node-server.ts) proxies browsers' requests before Nitro sees them; this route serves
 * the rest: internal calls (SSR $fetch, which never pass the gate) with the same rule on other spellings of an app
 * route's path, and every proxied request under `nuxt dev` (whose server is Nitro's, behind the dev gate), where its
 * WebSocket hooks are the tunnel too.
 */
export default defineEventHandler({
  handler(event) {
    const { req, res } = event.node
    const scope = requestScope(event)
    // Decided again here on the path this route was given (remembered: cheap): with a non-root app.baseURL the gate
    // saw the path with its base, and internal calls never pass the gate.
    if (useApiDecider()(routerPath(req.url ?? '/'), (req.method ?? 'GET').toLowerCase()) === 'refuse') {
      return sendGatewayError(res, new GatewayError(400, MESSAGES.apiPathInvalid))
    }
    const id = scope?.id ?? requestIdOf(req)
    res.setHeader('x-request-id', id)
    return new Promise<void>((resolve) => {
      res.on('close', () => resolve())
      proxyApiRequest(req, res, { id, client: scope?.client ?? unscopedClient(req), exchange: scope?.exchange })
    })
  },
  websocket: import.meta.dev ? devTunnel : undefined,
})
