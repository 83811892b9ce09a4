import { randomUUID } from 'node:crypto'
import { defineEventHandler } from 'h3'
import { acceptedRequestId } from '../../core/forwarding'
import { routerPath } from '../../core/route-match'
import { proxyApiRequest } from '../../utils/api-proxy'
import { GatewayError, MESSAGES, sendGatewayError } from '../../utils/gateway-error'
import { useApiDecider } from '../../utils/route-decider'

/**
 * Any method on /api/**: the streaming proxy to APP_API_PROXY_TARGET. A more specific route of the app wins.
 * Requests from browsers are proxied by the request gate (server/plugins/request-gate.ts) before they get here;
 * this route serves internal calls (SSR $fetch), with the same rule on other spellings of an app route's path.
 */
export default defineEventHandler((event) => {
  const { req, res } = event.node
  const path = routerPath(req.url ?? '/')
  if (useApiDecider()(path, (req.method ?? 'GET').toLowerCase()) === 'refuse') {
    return sendGatewayError(res, new GatewayError(400, MESSAGES.apiPathInvalid))
  }
  const requestId = acceptedRequestId(req.headers['x-request-id']) ?? randomUUID()
  res.setHeader('x-request-id', requestId)
  return new Promise<void>((resolve) => {
    res.on('close', () => resolve())
    proxyApiRequest(req, res, requestId)
  })
})
