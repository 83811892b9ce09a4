import type { IncomingMessage } from 'node:http'
import type { TLSSocket } from 'node:tls'
import { clientInfo } from '../core/forwarding'
import { isSameOriginRequest } from '../core/origin-check'
import { useGatewayConfig } from './gateway-config'
import { GatewayError, MESSAGES } from './gateway-error'

/** The 403 to answer when an unsafe request comes from another origin (any path: see request-gate), else undefined. */
export function crossOriginRefusal(req: IncomingMessage): GatewayError | undefined {
  const method = req.method ?? 'GET'
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return undefined
  const { trustProxy, trustedOrigins } = useGatewayConfig().config
  const site = req.headers['sec-fetch-site']
  const allowed = isSameOriginRequest({
    method,
    secFetchSite: typeof site === 'string' ? site : undefined,
    origin: req.headers.origin,
    host: clientInfo(req.headers, '', !!(req.socket as TLSSocket).encrypted, trustProxy).host,
    trustedOrigins,
  })
  return allowed ? undefined : new GatewayError(403, MESSAGES.crossOrigin)
}
