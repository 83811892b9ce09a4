/**
 * Which route of the routes file serves a path under /api: the longest prefix that matches whole segments of the path
 * Nitro's router sees (core/http/route-match.ts's routerPath), or none (APP_API_PROXY_TARGET). Pure.
 */
import { pathSpellings } from '../http/route-match'

/** Paths longer than this are chosen for every time; shorter ones are remembered (see createRouteChooser). */
const REMEMBERED_PATH_MAX = 256
/** Choices remembered at most; when full, the memory starts over. */
const REMEMBERED_MAX = 1024

/**
 * A function from a router path under /api to its route (undefined: no route, the default backend), or null when the
 * path is refused: another spelling a backend may read as the same path (';' parameters removed, '\' as '/', repeated
 * slashes folded, decoded once more, lower case: route-match.ts's pathSpellings) would be another route's
 * (`/api//billing/x`, `/api/billing;x/y`, `/api/BILLING/x`, `/api/billing%2Fx` beside a route /api/billing), so that
 * no spelling reaches a backend while the gateway applied another route's rules. Prefixes are lower-case unreserved
 * segments (core/config/routes.ts): a path of them has no other spelling. A lookup is one Map probe per segment
 * of the longest prefix, whatever the number of routes; choices are remembered per path.
 */
export function createRouteChooser<T extends { prefix: string }>(routes: readonly T[]): (path: string) => T | undefined | null {
  const byPrefix = new Map(routes.map(route => [route.prefix, route]))
  const depth = Math.max(0, ...routes.map(route => route.prefix.split('/').length - 1))
  const longest = (path: string): T | undefined => {
    // Only the first `depth` segments can match: start there, then drop one segment at a time down to '/api/x'.
    let end = 0
    for (let segment = 0; segment < depth; segment++) {
      end = path.indexOf('/', end + 1)
      if (end === -1) break
    }
    let candidate = end === -1 ? path : path.slice(0, end)
    while (candidate.length > 4) {
      const route = byPrefix.get(candidate)
      if (route) return route
      candidate = candidate.slice(0, candidate.lastIndexOf('/'))
    }
    return undefined
  }
  const choose = (path: string): T | undefined | null => {
    const route = longest(path)
    for (const spelling of pathSpellings(path)) {
      if (longest(spelling) !== route) return null
    }
    return route
  }
  const remembered = new Map<string, T | null | undefined>()
  return (path) => {
    if (path.length > REMEMBERED_PATH_MAX) return choose(path)
    let route = remembered.get(path)
    if (route === undefined && !remembered.has(path)) {
      route = choose(path)
      if (remembered.size >= REMEMBERED_MAX) remembered.clear()
      remembered.set(path, route)
    }
    return route
  }
}
