import type { IncomingMessage, ServerResponse } from 'node:http'
import type { TLSSocket } from 'node:tls'
import { clientInfo } from '../core/forwarding'
import { useGatewayConfig } from './gateway-config'
import { useLogger } from './logger'
import { methodLabel, statusClass, useMetrics, type RouteGroup } from './metrics'
import { workStarted } from './shutdown'

/** An access line's path is cut at this length (the query is never written: it may hold anything). */
const MAX_LOGGED_PATH = 2048

/** The path of a request URL without its query, cut to MAX_LOGGED_PATH. */
export function loggedPath(url: string | undefined): string {
  const raw = url ?? '/'
  const query = raw.indexOf('?')
  const path = query === -1 ? raw : raw.slice(0, query)
  return path.length > MAX_LOGGED_PATH ? `${path.slice(0, MAX_LOGGED_PATH)}…` : path
}

/**
 * Follows one request to its end: counts it for the shutdown, and when it ends (answered, or left by the client)
 * writes the access line (APP_ACCESS_LOG; probes at debug level only) and the request metrics. `bytes` is what went
 * out on the socket for this answer, headers included.
 */
export function observeRequest(req: IncomingMessage, res: ServerResponse, requestId: string, group: RouteGroup): void {
  const start = performance.now()
  const method = req.method ?? 'GET'
  const socket = req.socket
  const bytesBefore = socket.bytesWritten
  const address = socket.remoteAddress ?? ''
  const ended = workStarted()
  res.once('close', () => {
    ended()
    const seconds = (performance.now() - start) / 1000
    const status = res.headersSent ? res.statusCode : 0
    const metrics = useMetrics()
    if (metrics) {
      metrics.requests.inc({ group, method: methodLabel(method), status_class: statusClass(status) })
      metrics.requestDuration.observe({ group }, seconds)
    }
    const { config } = useGatewayConfig()
    if (!config.logging.access) return
    const log = useLogger()
    const level = group === 'probe' ? 'debug' : 'info'
    if (!log.isLevelEnabled(level)) return
    const path = loggedPath(req.url)
    log[level]({
      type: 'access',
      method,
      path,
      status,
      ms: Math.round(seconds * 100_000) / 100,
      bytes: socket.bytesWritten - bytesBefore,
      requestId,
      client: clientInfo(req.headers, address, !!(socket as TLSSocket).encrypted, config.trustProxy).ip,
      group,
      ...(res.writableFinished ? {} : { aborted: true }),
    }, `${method} ${path} ${status}`)
  })
}
