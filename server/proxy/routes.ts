import { hasAllPermissions, hasAnyPermission } from '../../shared/permissions'
import type { ApiRoute, GatewayConfig, RouteAudience, RouteTokenRule } from '../core/config/types'
import { routerPath } from '../core/http/route-match'
import { createRouteChooser } from '../core/proxy/route-choice'
import { combineNeeds, needOf, type AuthLevelNeed } from '../core/session/auth-level'
import type { SessionPayload } from '../core/session/seal'
import { GatewayError, MESSAGES } from '../http/errors'
import { useGatewayConfig } from '../ops/config'
import { watchRoutePools, type RoutePoolState } from '../ops/route-metrics'
import { liveSessionUser } from '../session/token'
import { createBackendPool, useBackendPool, type BackendPool } from './backend-pool'

/**
 * A backend the proxy and the tunnel send to: a route of the routes file (APP_API_ROUTES_FILE), or 'default',
 * APP_API_PROXY_TARGET with the contract's rules (the token when the session has a live one, else no Authorization).
 */
export interface BackendRoute {
  name: string
  /** Whether its name goes to the access line and the metrics: every route's when there is a routes file, else none. */
  labelled: boolean
  /** What the raw URL starts with and is cut off before the base path: the route's prefix, '/api' for the default. */
  prefix: string
  origin: string
  host: string
  hostname: string
  port: string
  protocol: string
  basePath: string
  token: RouteTokenRule
  /** The audience of its own token (OpenID only), sent instead of the session's main token; undefined: the main one. */
  audience: RouteAudience | undefined
  /** The session is checked before the backend: token `user`, or permissions to hold. */
  guarded: boolean
  permissions: readonly string[]
  anyPermissions: readonly string[]
  timeoutMs: number
  websocket: boolean
  /** Step-up (OpenID sessions): the login level its requests need, the route's and APP_OIDC_ACR_VALUES/_MAX_AGE's. */
  stepUp: AuthLevelNeed | undefined
  /** Headers added to each request (undefined: none). */
  headers: Readonly<Record<string, string>> | undefined
  /** Its connections (made on first use). */
  pool: () => BackendPool
  /** Its connections when made already. */
  madePool: () => BackendPool | undefined
}

interface RouteTable {
  /** The configuration's routes it was made from (a reload replaces them: the table is made again). */
  source: readonly ApiRoute[]
  /** The route of a router path: a named one, undefined for the default, null when refused (route-choice.ts). */
  choose: (path: string) => BackendRoute | undefined | null
  named: BackendRoute[]
  fallback: BackendRoute | undefined
}

let table: RouteTable | undefined

function backendRoute(route: ApiRoute, labelled: boolean, pool: () => BackendPool, madePool: () => BackendPool | undefined): BackendRoute {
  const url = new URL(route.target)
  const headers = Object.keys(route.headers).length ? route.headers : undefined
  return {
    name: route.name,
    labelled,
    prefix: route.prefix,
    origin: url.origin,
    host: url.host,
    hostname: url.hostname,
    port: url.port,
    protocol: url.protocol,
    basePath: url.pathname,
    token: route.token,
    audience: route.audience,
    guarded: route.token === 'user' || route.permissions.length > 0 || route.anyPermissions.length > 0,
    permissions: route.permissions,
    anyPermissions: route.anyPermissions,
    timeoutMs: route.timeoutMs,
    websocket: route.websocket,
    stepUp: stepUpOf(route),
    headers,
    pool,
    madePool,
  }
}

/** The login level a route's requests need with an OpenID Provider: its own and the whole gateway's. */
function stepUpOf(route: ApiRoute): AuthLevelNeed | undefined {
  const { oidc } = useGatewayConfig().config
  return oidc ? combineNeeds(needOf(route.acr, route.maxAge), needOf(oidc.acrValues, oidc.maxAge)) : undefined
}

/** The named routes' pools, by name and target: a reload keeps the pool (its connections) of a route it keeps. */
const namedPools = new Map<string, BackendPool>()

/** A named route's own backend, with a pool of its own made on first use. */
function namedRoute(route: ApiRoute): BackendRoute {
  const key = `${route.name} ${route.target}`
  let pool = namedPools.get(key)
  const made = () => {
    if (!pool) namedPools.set(key, pool = createBackendPool())
    return pool
  }
  return backendRoute(route, true, made, () => pool)
}

/** APP_API_PROXY_TARGET as a route: the contract's token rule, nothing checked, its own pool; undefined when not set. */
function defaultRoute(config: GatewayConfig): BackendRoute | undefined {
  if (!config.apiProxyTarget) return undefined
  const route: ApiRoute = { name: 'default', prefix: '/api', target: config.apiProxyTarget, token: 'optional', permissions: [], anyPermissions: [], timeoutMs: config.apiProxyTimeout, websocket: true, headers: {} }
  return backendRoute(route, !!config.apiRoutesFile, useBackendPool, useBackendPool)
}

/**
 * The routes now: made on first use, and again when a reload replaced the configuration's routes (ops/config.ts's
 * reloadRoutes). A route removed by a reload keeps serving the requests that hold it; its idle connections close
 * after undici's keep-alive time.
 */
function routeTable(): RouteTable {
  const { config, routes } = useGatewayConfig()
  if (table?.source === routes) return table
  const fallback = table ? table.fallback : defaultRoute(config)
  const named = routes.map(namedRoute)
  const kept = new Set(routes.map(route => `${route.name} ${route.target}`))
  for (const key of namedPools.keys()) if (!kept.has(key)) namedPools.delete(key)
  if (!table) watchRoutePools(routePoolStates)
  table = { source: routes, choose: createRouteChooser(named), named, fallback }
  return table
}

/**
 * Each named route's pool now, for the per-route gauges: zeros and the configured size before its first request
 * (APP_API_PROXY_TARGET's pool has the gauges without a route label).
 */
function routePoolStates(): RoutePoolState[] {
  const size = useGatewayConfig().config.apiPool.connections
  return routeTable().named.map((route) => {
    const turnstile = route.madePool()?.turnstile
    return { route: route.name, busy: turnstile?.busy ?? 0, waiting: turnstile?.waiting ?? 0, size: turnstile?.size ?? size }
  })
}

/**
 * The backend of a request under /api, chosen on the path Nitro's router sees (routerPath of its raw URL): the longest route prefix that
 * matches whole segments, else APP_API_PROXY_TARGET. An error to answer instead: 400 'Đường dẫn API không hợp lệ.' for
 * a spelling another route's backend may read as its own (route-choice.ts), 500 'apiProxyTarget chưa cấu hình.' when
 * no route matches and APP_API_PROXY_TARGET is not set.
 */
export function routeOf(rawUrl: string): BackendRoute | GatewayError {
  const { choose, named, fallback } = routeTable()
  const route = named.length ? choose(routerPath(rawUrl)) : undefined
  if (route === null) return new GatewayError(400, MESSAGES.apiPathInvalid)
  return route ?? fallback ?? new GatewayError(500, MESSAGES.proxyTargetMissing)
}

/**
 * The gateway's own check of a guarded route, once the session's token is known: 401 without a live session, 403 for
 * a user who lacks one of `permissions` or all of `anyPermissions` (checked on the user as forward auth reads it), with
 * the contract's messages; undefined when the request may go on. The backend still checks for itself.
 */
export function routeRefusal(route: BackendRoute, session: SessionPayload | null, token: string | undefined): GatewayError | undefined {
  const user = liveSessionUser(session, token)
  if (!user) return new GatewayError(401, MESSAGES.verifyNoSession)
  if (!hasAllPermissions(user, route.permissions) || !hasAnyPermission(user, route.anyPermissions)) return new GatewayError(403, MESSAGES.verifyForbidden)
  return undefined
}

/** Each named route's address (its target, base path included) and whether its pool is saturated now, for /readyz. */
export function namedRouteStates(): { name: string, target: string, saturated: boolean }[] {
  return routeTable().named.map((route) => {
    const turnstile = route.madePool()?.turnstile
    return { name: route.name, target: `${route.origin}${route.basePath}`, saturated: !!turnstile && turnstile.busy >= turnstile.size }
  })
}
