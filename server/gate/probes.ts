import type { IncomingMessage, ServerResponse } from 'node:http'
import { missingSettings } from '../core/config/start-checks'
import { GatewayError, MESSAGES, sendGatewayError } from '../http/errors'
import { oidcReady } from '../oidc/provider'
import { useGatewayConfig } from '../ops/config'
import { isShuttingDown } from '../ops/drain'
import { backendPoolState } from '../ops/metrics'
import { namedRouteStates } from '../proxy/routes'
import { pingRevocationsRedis } from '../session/revocations'
import { storesReady } from './stores'

/** How long the IAM and the backend get to answer a readiness check. */
const REACH_TIMEOUT_MS = 1_000
/** IAM and backend reachability is checked at most this often (a public /readyz must not relay a flood). */
const REACH_INTERVAL_MS = 2_000

type Reach = 'up' | 'down' | 'not configured' | 'mock'

interface Reachability { iam: Reach, backend: Reach, routes: Record<string, Reach> | undefined }

let reachCache: { at: number, result: Promise<Reachability> } | undefined

/** Whether an address answers HTTP at all (any status counts: only reachability is asked). */
async function answers(url: string): Promise<Reach> {
  try {
    const response = await fetch(url, { method: 'GET', redirect: 'manual', signal: AbortSignal.timeout(REACH_TIMEOUT_MS) })
    await response.body?.cancel()
    return 'up'
  }
  catch {
    return 'down'
  }
}

/** IAM and backend reachability (each route's backend too), shared by the probes of the last REACH_INTERVAL_MS. */
function reachability(): Promise<Reachability> {
  const now = Date.now()
  if (!reachCache || now - reachCache.at > REACH_INTERVAL_MS) {
    const { config } = useGatewayConfig()
    const iam = config.mock ? Promise.resolve<Reach>('mock') : config.kind === 'oidc' ? answers(config.oidc!.issuer) : config.baseURL ? answers(config.baseURL) : Promise.resolve<Reach>('not configured')
    const backend = config.apiProxyTarget ? answers(config.apiProxyTarget) : Promise.resolve<Reach>('not configured')
    // One check an address, however many routes share it.
    const targets = new Map<string, Promise<Reach>>()
    const routes = namedRouteStates().map(({ name, target }) => {
      if (!targets.has(target)) targets.set(target, answers(target))
      return targets.get(target)!.then(reach => [name, reach] as const)
    })
    reachCache = {
      at: now,
      result: Promise.all([iam, backend, Promise.all(routes)]).then(([iam, backend, routes]) => ({ iam, backend, routes: routes.length ? Object.fromEntries(routes) : undefined })),
    }
  }
  return reachCache.result
}

function send(req: IncomingMessage, res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  res.statusCode = status
  res.setHeader('content-type', 'application/json; charset=utf-8')
  res.setHeader('content-length', Buffer.byteLength(text))
  res.setHeader('cache-control', 'no-store')
  res.end(req.method === 'HEAD' ? undefined : text)
}

/**
 * GET /healthz: 200 `{ status: 'ok' }` while the process serves. GET /readyz: 200 when the gateway can serve (Redis
 * answers, when configured), else 503: `starting` until the stores have started (gate/stores.ts) and, with
 * APP_AUTH_KIND=oidc, the provider's discovery has succeeded (`checks.oidc`), `not ready` while
 * Redis does not answer or a required setting is missing (`checks.config`: `{ missing: [APP_*, ...] }`, else `ok`:
 * core/config/start-checks.ts), `shutting down` from the moment SIGTERM arrives; the body names each dependency and
 * whether it answered (IAM or backends never make it fail; `routes`: each route of APP_API_ROUTES_FILE by name, when
 * there is one), and `backendPool`: `saturated` while every connection of a backend's pool is busy (APP_API_PROXY_TARGET's
 * or a route's: requests wait for one, then 503), else `ok`. A saturated pool never makes it fail either: under
 * a flood that would take every instance out of the load balancer at once. Other methods: 405.
 */
export async function answerProbe(probe: 'healthz' | 'readyz', req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    sendGatewayError(res, new GatewayError(405, MESSAGES.methodNotAllowed, { allow: 'GET, HEAD' }))
    return
  }
  if (probe === 'healthz') return send(req, res, 200, { status: 'ok' })
  const { config } = useGatewayConfig()
  const [redis, { iam, backend, routes }] = await Promise.all([
    config.redis ? pingRevocationsRedis().then((ok): Reach => ok ? 'up' : 'down') : Promise.resolve<Reach>('not configured'),
    reachability(),
  ])
  // An OpenID Provider whose discovery has not succeeded yet: no login could start.
  const oidc = config.kind !== 'oidc' ? undefined : oidcReady() ? 'up' : 'down'
  // An instance that cannot log anyone in (or reach no backend) is not ready: the variables it lacks are named.
  const missing = missingSettings(config)
  const status = isShuttingDown() ? 'shutting down' : !storesReady() || oidc === 'down' ? 'starting' : redis === 'down' || missing.length ? 'not ready' : 'ready'
  const pool = backendPoolState()
  const saturated = (pool && pool.busy >= pool.size) || namedRouteStates().some(route => route.saturated)
  const backendPool = saturated ? 'saturated' : 'ok'
  const checks = { config: missing.length ? { missing } : 'ok', redis, iam, backend, backendPool, ...(routes ? { routes } : {}), ...(oidc ? { oidc } : {}) }
  send(req, res, status === 'ready' ? 200 : 503, { status, checks })
}
