/**
 * gate/: where a request comes in. The gate (this file) decides what becomes of each request and answers only its
 * refusals; the server (server/node-server.ts, or server/dev/gate.ts under `nuxt dev`) dispatches the rest: the
 * proxy, Nitro, the probes (probes.ts), the forward-auth check. stores.ts starts the stores the readiness waits for.
 * May import every layer below it (core, ops, http, stores, session, iam, oidc, proxy, verify); nothing imports
 * gate/ but the server, the dev gate and Nitro's folders.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { contractRoute, probeOf, type ContractRoute } from '../core/http/contract-routes'
import type { ClientInfo } from '../core/http/forwarding'
import { isSameOriginRequest } from '../core/http/origin-check'
import { isApiPath, routerPath } from '../core/http/route-match'
import { observeRequest } from '../http/access'
import { GatewayError, MESSAGES, sendGatewayError } from '../http/errors'
import { useApiDecider } from '../http/route-decider'
import { attachScope, requestIdOf, unscopedClient, type RequestScope } from '../http/scope'
import { useGatewayConfig } from '../ops/config'
import { isShuttingDown } from '../ops/drain'
import type { RouteGroup } from '../ops/metrics'
import { startRequestSpan } from '../ops/tracing/spans'
import { useTracing } from '../ops/tracing/holder'
import { slideNitroSession } from '../session/cookie'

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
 * the request's scope once (http/scope.ts), starts following it, answers its refusals and says who serves the rest:
 * 0. a request target that is not a path (absolute form, `*`) is 400, echoing nothing; a request id on every answer;
 *    /healthz and /readyz go to the probes, outside every rule below;
 * 1. the cross-origin rule for every unsafe request, whatever its path and spelling;
 * 2. 405 for a contract route called with a method it does not have (HEAD is served as GET);
 * 3. /api/**: the streaming proxy, unless Nitro's router would give the path to a route of the app (that route wins);
 *    another spelling of an app route's path (`/api//health`, `/api/health;x`) is refused, never proxied;
 * 4. GET /auth/verify goes to the forward-auth check: no Nitro work on its path;
 * 5. a request Nitro serves slides its session's idle timeout (session/cookie.ts slideNitroSession) when due.
 * With tracing on (ops/tracing/), the request's server span starts here and hangs on its exchange.
 * Every decision is taken on the path Nitro's router sees (core/http/route-match.ts), with Nitro's route table read at
 * build time (http/route-decider.ts). The caller serves what the scope's `route` says: 'proxy' with
 * proxyApiRequest, 'nitro' with Nitro's listener, 'probe' with answerProbe, 'verify' with answerVerify.
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
  const route = answer ? 'answered' : probe ? 'probe' : contract?.group === 'verify' ? 'verify' : decision === 'proxy' ? 'proxy' : 'nitro'
  const group: RouteGroup = contract?.group ?? (api ? 'api' : probe ? 'probe' : 'page')
  const id = requestIdOf(req)
  const scope: RequestScope = { id, client, route, probe, group, exchange: observeRequest(req, res, id, client.ip, group) }
  attachScope(req, scope)
  // Tracing on: the request's server span, ended with the exchange (http/access.ts); the server runs the rest under it.
  // The probes have none: an orchestrator's checks every few seconds would be most of the traces.
  const tracing = useTracing()
  if (tracing && !probe) scope.exchange.span = startRequestSpan(tracing, { method, url, headers: req.headers, group, scheme: client.proto, client: client.ip }, useGatewayConfig().config.otelTrustIncoming)
  // A proxied answer carries the id in the proxy's one writeHead (Node's fast path: a response with no header set
  // before writeHead takes the object as it is); every other answer gets it here.
  if (route !== 'proxy') res.setHeader('x-request-id', id)
  if (isShuttingDown()) res.setHeader('connection', 'close')

  if (answer) {
    sendGatewayError(res, answer)
    return scope
  }
  // h3's router has no HEAD fallback (HEAD /auth/session would reach the page renderer); Node sends no body.
  if (contract && method === 'HEAD' && !contract.methods.includes('POST')) req.method = 'GET'
  // Activity slides the idle timeout; the routes that write or end the session (login, logout and OpenID's) set their own.
  if (route === 'nitro' && group !== 'login' && group !== 'logout') slideNitroSession(req, res)
  return scope
}
