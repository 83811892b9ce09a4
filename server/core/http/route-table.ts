/** Nitro's route table as the request gate mirrors it (core/http/route-match.ts), read at build time. Pure. */
import type { RouteEntry } from './route-match'

/** What the gate needs of one of Nitro's handlers (scanned route files and registered handlers alike). */
export interface NitroHandler {
  route?: string
  method?: string
  middleware?: boolean
  handler: string
}

/**
 * Every route of Nitro's router, with the gateway's /api/** catch-all (the handler file `proxyHandler`) marked as the
 * proxy, and the page renderer as '/**' for every method when there is one. Throws when the catch-all is not there
 * exactly once: a moved or renamed proxy route must stop the build, never turn the fast path off (or on) unnoticed.
 */
export function gatewayRouteTable(handlers: readonly NitroHandler[], proxyHandler: string, hasRenderer: boolean): RouteEntry[] {
  const routes: RouteEntry[] = handlers
    .filter(handler => handler.route && !handler.middleware)
    .map(handler => ({
      route: handler.route!,
      ...(handler.method ? { method: handler.method.toLowerCase() } : {}),
      ...(handler.handler === proxyHandler ? { proxy: true } : {}),
    }))
  const proxies = routes.filter(route => route.proxy)
  if (proxies.length !== 1 || !proxies[0]!.route.startsWith('/api/**')) {
    throw new Error(`svc-auth-gateway: bảng route của Nitro có ${proxies.length} route proxy /api/** của gateway (${proxyHandler}`
      + `${proxies.length ? `: ${proxies.map(route => route.route).join(', ')}` : ''}), cần đúng một ở /api/**.`)
  }
  if (hasRenderer) routes.push({ route: '/**' })
  return routes
}
