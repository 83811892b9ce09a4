/**
 * http/: a request as every concern reads it: its scope (this file: id, client, who serves it), the contract's errors
 * and their JSON (errors.ts), JSON and form bodies (json-body.ts), the contract routes' wrapper (route.ts), the /api
 * routing decision on Nitro's route table (route-decider.ts), the access line and request metrics (access.ts), and
 * the audit lines of a request (audit.ts).
 * May import: core, ops. Imported by every concern above (stores, session, iam, oidc, proxy, verify, gate).
 */
import { randomUUID } from 'node:crypto'
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import type { TLSSocket } from 'node:tls'
import type { H3Event } from 'h3'
import { acceptedRequestId, clientInfo, type ClientInfo } from '../core/http/forwarding'
import { useGatewayConfig } from '../ops/config'
import type { RouteGroup } from '../ops/metrics'
import type { Span } from '../ops/tracing/spans'

/**
 * A request's scope: its facts, worked out once by the request gate (gate/gate.ts) and read here by every concern
 * (the proxy, the access line, the metrics, the audit lines, the OpenID login's own origin). Each fact is worked out
 * in this file only: a request the gate never saw (an internal SSR call, a WebSocket handshake) gets them the same way.
 */
export interface RequestScope {
  /** The request id: the client's `X-Request-Id` when it is sane, else a new UUID. On every answer. */
  readonly id: string
  /** The client as believed through APP_TRUST_PROXY: address, host, scheme, the X-Forwarded-For to send on. */
  readonly client: ClientInfo
  /**
   * Who serves the request: the streaming proxy, Nitro (the contract's routes, the app's routes and pages), the
   * forward-auth check, a probe (`probe` says which), or nobody further (the gate refused it).
   */
  readonly route: 'proxy' | 'nitro' | 'verify' | 'probe' | 'answered'
  /** The probe of a `route: 'probe'` request. */
  readonly probe?: 'healthz' | 'readyz'
  /** Its group in the metrics and the access line. */
  readonly group: RouteGroup
  /** Follows it to its end (access line, metrics, drain); the proxy hangs its clean-up on it. */
  readonly exchange: Exchange
}

/** A request followed to its end by http/access.ts's observeRequest. */
export interface Exchange {
  /** Run first when the exchange ends (the proxy's clean-up): one 'close' listener serves the whole request. */
  onEnd?: () => void
  /** The route of the routes file that serves it (the proxy says, with a routes file): in its access line and metrics. */
  route?: string
  /** The request's server span, with tracing on (gate/gate.ts starts it, its end ends it). */
  span?: Span
}

const SCOPE = Symbol('svc-gateway-scope')
type ScopedRequest = IncomingMessage & { [SCOPE]?: RequestScope }

/** Gives a request its scope (the gate does, once). */
export function attachScope(req: IncomingMessage, scope: RequestScope): void {
  ;(req as ScopedRequest)[SCOPE] = scope
}

/** The scope the gate gave a request; undefined for internal calls (SSR `$fetch` never passes the gate). */
export function requestScope(from: IncomingMessage | H3Event): RequestScope | undefined {
  return ('node' in from ? from.node.req as ScopedRequest : from as ScopedRequest)[SCOPE]
}

/**
 * Who sent a request, as every part of the gateway believes it: the client through APP_TRUST_PROXY reverse proxies
 * (address, host, scheme, the X-Forwarded-For to send on). The gate gives every request this; for a request without
 * a scope (an internal call, a WebSocket handshake) it is worked out the same way here.
 */
export function unscopedClient(req: IncomingMessage): ClientInfo {
  return clientFrom(req.headers, req.socket?.remoteAddress ?? '', !!(req.socket as TLSSocket | undefined)?.encrypted)
}

/** The client of a request known by its headers and its socket's address and encryption (see unscopedClient). */
export function clientFrom(headers: IncomingHttpHeaders, socketAddress: string, encrypted: boolean): ClientInfo {
  return clientInfo(headers, socketAddress, encrypted, useGatewayConfig().config.trustProxy)
}

/** A request's id: the client's `X-Request-Id` when it is sane, else a new UUID. */
export function requestIdOf(req: IncomingMessage): string {
  return requestIdFrom(req.headers)
}

/** The request id of a request known by its headers (see requestIdOf). */
export function requestIdFrom(headers: IncomingHttpHeaders): string {
  return acceptedRequestId(headers['x-request-id']) ?? randomUUID()
}

/** The client's address, through APP_TRUST_PROXY reverse proxies (the request scope's when it has one). */
export function clientAddress(event: H3Event): string {
  return (requestScope(event)?.client ?? unscopedClient(event.node.req)).ip
}
