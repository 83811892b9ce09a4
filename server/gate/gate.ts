import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { TLSSocket } from 'node:tls'
import type { H3Event } from 'h3'
import { contractRoute, probeOf, type ContractRoute } from '../core/http/contract-routes'
import { acceptedRequestId, clientInfo, type ClientInfo } from '../core/http/forwarding'
import { isSameOriginRequest } from '../core/http/origin-check'
import { isApiPath, routerPath } from '../core/http/route-match'
import { useGatewayConfig } from '../ops/config'
import { GatewayError, MESSAGES, sendGatewayError } from '../http/errors'
import type { RouteGroup } from '../ops/metrics'
import { answerVerify } from '../verify/forward-auth'
import { answerProbe } from './probes'
import { observeRequest, type Exchange } from '../http/access'
import { useApiDecider } from '../http/route-decider'
import { isShuttingDown } from '../ops/drain'

/**
 * One request's facts, worked out once at the gate and handed along as they are: to the proxy, the access line, the
 * metrics and the audit lines.
 */
export interface RequestScope {
  /** The request id: the client's `X-Request-Id` when it is sane, else a new UUID. On every answer. */
  readonly id: string
  /** The client as believed through APP_TRUST_PROXY: address, host, scheme, the X-Forwarded-For to send on. */
  readonly client: ClientInfo
  /**
   * Where the request goes: the streaming proxy, Nitro (the contract's routes, the app's routes and pages), or
   * nowhere further (the gate answered it: a probe, a refusal).
   */
  readonly route: 'proxy' | 'nitro' | 'answered'
  /** Its group in the metrics and the access line. */
  readonly group: RouteGroup
  /** Follows it to its end (access line, metrics, drain); the proxy hangs its clean-up on it. */
  readonly exchange: Exchange
}

const SCOPE = Symbol('svc-gateway-scope')
type ScopedRequest = IncomingMessage & { [SCOPE]?: RequestScope }

/** The scope the gate gave a request; undefined for internal calls (SSR `$fetch` never passes the gate). */
export function requestScope(from: IncomingMessage | H3Event): RequestScope | undefined {
  return ('node' in from ? from.node.req as ScopedRequest : from as ScopedRequest)[SCOPE]
}

/**
 * Who sent a request, as every part of the gateway believes it: the client through APP_TRUST_PROXY reverse proxies
 * (address, host, scheme, the X-Forwarded-For to send on). For a request without a scope (an internal call, a
 * WebSocket handshake), worked out the same way as the gate does.
 */
export function unscopedClient(req: IncomingMessage): ClientInfo {
  return clientInfo(req.headers, req.socket?.remoteAddress ?? '', !!(req.socket as TLSSocket | undefined)?.encrypted, useGatewayConfig().config.trustProxy)
}

/** A request's id: the client's `X-Request-Id` when it is sane, else a new UUID. */
export function requestIdOf(req: IncomingMessage): string {
  return acceptedRequestId(req.headers['x-request-id']) ?? randomUUID()
}

/** The 403 to answer when an unsafe request comes from another origin (whatever its path and spelling), else undefined. */
function crossOriginRefusal(req: IncomingMessage, method: string, client: ClientInfo): GatewayError | undefined {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return undefined
  const site = req.headers['sec-fetch-site']
  const allowed = isSameOriginRequest({
    method,
    secFetchSite: typeof site === 'string' ? site : undefined,
    origin: req.headers.origin,
    host: client.host,
    trustedOrigins: useGatewayConfig().config.trustedOrigins,
  })
  return allowed ? undefined : new GatewayError(403, MESSAGES.crossOrigin)
}

/** 405 for a contract route called with a method it does not have, else undefined. */
function methodRefusal(contract: ContractRoute | undefined, method: string): GatewayError | undefined {
  return contract && !contract.methods.includes(method) ? new GatewayError(405, MESSAGES.methodNotAllowed, { allow: contract.methods.join(', ') }) : undefined
}

/**
 * The gateway's gate, ahead of all of Nitro's per-request work (hooks, route rules, middleware, router). It works out
 * the request's scope once, starts following it, and answers what is the gate's to answer:
 * 0. a request target that is not a path (absolute form, `*`) is 400, echoing nothing; a request id on every answer;
 *    /healthz and /readyz answered here, outside every rule below;
 * 1. the cross-origin rule for every unsafe request, whatever its path and spelling;
 * 2. 405 for a contract route called with a method it does not have (HEAD is served as GET);
 * 3. /api/**: the streaming proxy, unless Nitro's router would give the path to a route of the app (that route wins);
 *    another spelling of an app route's path (`/api//health`, `/api/health;x`) is refused, never proxied;
 * 4. GET /auth/verify, the forward-auth check (verify/forward-auth.ts), answered here: no Nitro work on its path.
 * Every decision is taken on the path Nitro's router sees (core/http/route-match.ts), with Nitro's route table read at
 * build time (http/route-decider.ts). The caller serves what the scope's `route` says: 'proxy' with
 * proxyApiRequest, 'nitro' with Nitro's listener.
 */
export function gateRequest(req: IncomingMessage, res: ServerResponse): RequestScope {
  const url = req.url ?? '/'
  const method = req.method ?? 'GET'
  const path = routerPath(url)
  const contract = contractRoute(path)
  const api = !contract && isApiPath(path)
  const probe = contract || api ? undefined : probeOf(path)
  const client = unscopedClient(req)
  // Only origin-form targets ('/path'): an absolute-form one (`GET http://other.test/x`) is no path of ours, and
  // nothing of it is echoed. The probes stand outside every other rule.
  const refusal = url[0] !== '/'
    ? new GatewayError(400, MESSAGES.requestTargetInvalid, { connection: 'close' })
    : probe ? undefined : crossOriginRefusal(req, method, client) ?? methodRefusal(contract, method)
  const decision = api && !refusal ? useApiDecider()(path, method.toLowerCase()) : undefined
  const answer = refusal ?? (decision === 'refuse' ? new GatewayError(400, MESSAGES.apiPathInvalid) : undefined)
  const verify = !answer && contract?.group === 'verify'
  const route = answer || probe || verify ? 'answered' : decision === 'proxy' ? 'proxy' : 'nitro'
  const group: RouteGroup = contract?.group ?? (api ? 'api' : probe ? 'probe' : 'page')
  const id = requestIdOf(req)
  const scope: RequestScope = { id, client, route, group, exchange: observeRequest(req, res, id, client.ip, group) }
  ;(req as ScopedRequest)[SCOPE] = scope
  // A proxied answer carries the id in the proxy's one writeHead (Node's fast path: a response with no header set
  // before writeHead takes the object as it is); every other answer gets it here.
  if (route !== 'proxy') res.setHeader('x-request-id', id)
  if (isShuttingDown()) res.setHeader('connection', 'close')

  if (answer) sendGatewayError(res, answer)
  else if (probe) void answerProbe(probe, req, res)
  else if (verify) answerVerify(req, res, client)
  // h3's router has no HEAD fallback (HEAD /auth/session would reach the page renderer); Node sends no body.
  else if (contract && method === 'HEAD' && !contract.methods.includes('POST')) req.method = 'GET'
  return scope
}
