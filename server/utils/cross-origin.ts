import type { IncomingMessage, ServerResponse } from 'node:http'
import type { TLSSocket } from 'node:tls'
import { clientInfo } from '../core/forwarding'
import { isSameOriginRequest } from '../core/origin-check'
import { useGatewayConfig } from './gateway-config'
import { GatewayError, MESSAGES, sendGatewayError } from './gateway-error'

/** Answers 403 and returns true when an unsafe request comes from another origin (any path: see request-gate). */
export function refuseCrossOrigin(req: IncomingMessage, res: ServerResponse): boolean {
  const method = req.method ?? 'GET'
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return false
  const { trustProxy, trustedOrigins } = useGatewayConfig().config
  const site = req.headers['sec-fetch-site']
  const allowed = isSameOriginRequest({
    method,
    secFetchSite: typeof site === 'string' ? site : undefined,
    origin: req.headers.origin,
    host: clientInfo(req.headers, '', !!(req.socket as TLSSocket).encrypted, trustProxy).host,
    trustedOrigins,
  })
  if (!allowed) sendGatewayError(res, new GatewayError(403, MESSAGES.crossOrigin))
  return !allowed
}
