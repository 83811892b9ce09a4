import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AccessLine } from '../core/ops/access-line'
import { capLogField, MAX_LOGGED_PATH } from '../core/ops/log-field'
import { useGatewayConfig } from '../ops/config'
import { workStarted } from '../ops/drain'
import { accessLineWriter, useLogger } from '../ops/logger'
import { useMetrics, type RouteGroup } from '../ops/metrics'
import { endRequestSpan, traceFields, type Span } from '../ops/tracing/spans'
import type { Exchange } from './scope'

/** The path of a request URL without its query, cut to MAX_LOGGED_PATH (marked as cut, see capLogField). */
export function loggedPath(url: string | undefined): string {
  const raw = url ?? '/'
  const query = raw.indexOf('?')
  const path = query === -1 ? raw : raw.slice(0, query)
  return capLogField(path, MAX_LOGGED_PATH)
}

/** What an access line says of one exchange (a request, or a WebSocket tunnel when it closes). */
export interface AccessFacts {
  method: string
  url: string | undefined
  status: number
  seconds: number
  bytes: number
  requestId: string
  /** The client's address as believed (the request scope's). */
  client: string
  group: RouteGroup
  /** The route that served a proxied exchange, with a routes file. */
  route?: string
  /** The client left before the answer was complete. */
  aborted?: boolean
  /** A WebSocket tunnel: the bytes the client sent through it. */
  tunnelBytesIn?: number
  /** The exchange's server span, with tracing on: its ids join the line to the trace. */
  span?: Span
}

/**
 * Counts an exchange in the metrics (by its route too, when a routes file named one); the latency histograms only for
 * requests (a tunnel's life is no latency).
 */
export function countExchange(group: RouteGroup, method: string, status: number, seconds?: number, route?: string): void {
  const metrics = useMetrics()
  if (!metrics) return
  metrics.requests.count(group, method, status)
  if (seconds !== undefined) metrics.requestDuration.observe(group, seconds)
  if (route !== undefined) metrics.routes?.count(route, status, seconds)
}

/** Writes the access line of an exchange (APP_ACCESS_LOG; probes at debug level only). */
export function writeAccessLine(facts: AccessFacts): void {
  const { config } = useGatewayConfig()
  if (!config.logging.access) return
  const log = useLogger()
  const level = facts.group === 'probe' ? 'debug' : 'info'
  if (!log.isLevelEnabled(level)) return
  const path = loggedPath(facts.url)
  const line: AccessLine = {
    type: 'access',
    method: facts.method,
    path,
    status: facts.status,
    ms: Math.round(facts.seconds * 100_000) / 100,
    bytes: facts.bytes,
    requestId: facts.requestId,
    client: facts.client,
    group: facts.group,
  }
  if (facts.route !== undefined) line.route = facts.route
  const trace = traceFields(facts.span)
  if (trace) {
    line.traceId = trace.traceId
    line.spanId = trace.spanId
  }
  if (facts.aborted) line.aborted = true
  if (facts.tunnelBytesIn !== undefined) {
    line.tunnel = true
    line.bytesIn = facts.tunnelBytesIn
  }
  const writeLine = accessLineWriter(log)
  if (writeLine) writeLine(level, line)
  else log[level](line, `${facts.method} ${path} ${facts.status}`)
}

/**
 * Follows one request to its end: counts it for the shutdown, and when it ends (answered, or left by the client)
 * runs the exchange's onEnd, then writes the access line and the request metrics. `bytes` is what went out on the
 * socket for this answer, headers included.
 */
export function observeRequest(req: IncomingMessage, res: ServerResponse, requestId: string, client: string, group: RouteGroup): Exchange {
  const start = performance.now()
  const method = req.method ?? 'GET'
  const socket = req.socket
  const bytesBefore = socket.bytesWritten
  const ended = workStarted()
  const exchange: Exchange = {}
  // 'close' comes once per response: `on`, not `once` (no wrapper to make and remove on every request).
  res.on('close', () => {
    exchange.onEnd?.()
    ended()
    const seconds = (performance.now() - start) / 1000
    const status = res.headersSent ? res.statusCode : 0
    countExchange(group, method, status, seconds, exchange.route)
    if (exchange.span) endRequestSpan(exchange.span, status)
    writeAccessLine({
      method,
      url: req.url,
      status,
      seconds,
      bytes: socket.bytesWritten - bytesBefore,
      requestId,
      client,
      group,
      route: exchange.route,
      aborted: !res.writableFinished,
      span: exchange.span,
    })
  })
  return exchange
}
