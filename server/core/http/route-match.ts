/**
 * The routing decision of Nitro's router, taken ahead of it: which handler a request would reach. Pure.
 *
 * Nitro (h3 v1) decodes the path (ufo's decodePath, '%2F' kept), cuts it at the first '?' of the decoded text, and
 * looks it up in a radix3 tree; when the matched route has no handler for the method, the most specific other match
 * that has one wins. The gateway's checks decide on exactly that, so no spelling of a path reaches one handler while
 * a check thinks of another (`/%61uth/login` is `/auth/login`).
 */
import { createRouter, toRouteMatcher } from 'radix3'
import { decodePath } from 'ufo'

/** What serves a path: the gateway's /api proxy, another route (the app's own, a page), or nothing. */
export type RouteTarget = 'proxy' | 'route' | 'none'

/** One route of Nitro's router, as known at build time. */
export interface RouteEntry {
  route: string
  /** Lower-case method, or undefined for every method. */
  method?: string
  /** Whether this is the gateway's /api/** catch-all. */
  proxy?: boolean
}

/** The path Nitro's router matches for a raw request URL: decoded as h3 decodes it, without the query. */
export function routerPath(rawUrl: string): string {
  const queryAt = rawUrl.indexOf('?')
  const path = queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt)
  // Without a '%' decoding changes nothing (the usual case: no regular expression, no decodeURIComponent).
  if (!path.includes('%')) return path
  // h3 protects a literal '%25' from being decoded twice; a '?' that decoding produces ends the path for the router.
  const decoded = path.includes('%25') ? decodePath(path.replace(/%25/g, '%2525')) : decodePath(path)
  const cut = decoded.indexOf('?')
  return cut === -1 ? decoded : decoded.slice(0, cut)
}

/** Whether a router path is under /api, where the gateway's proxy may answer. */
export function isApiPath(path: string): boolean {
  return path === '/api' || path.startsWith('/api/')
}

interface RouteNode {
  handlers: Record<string, RouteTarget>
}

/** A function that tells what Nitro's router would route (router path, lower-case method) to. */
export type RouteDecider = (path: string, method: string) => RouteTarget

/** Mirrors h3's router (`createRouter` and its method fallback) over the given routes. */
export function createRouteDecider(entries: readonly RouteEntry[]): RouteDecider {
  const router = createRouter<RouteNode>({})
  const nodes = new Map<string, RouteNode>()
  for (const entry of entries) {
    let node = nodes.get(entry.route)
    if (!node) {
      node = { handlers: {} }
      nodes.set(entry.route, node)
      router.insert(entry.route, node)
    }
    node.handlers[entry.method ?? 'all'] = entry.proxy ? 'proxy' : 'route'
  }
  let matcher: ReturnType<typeof toRouteMatcher> | undefined
  return (path, method) => {
    const matched = router.lookup(path)
    if (!matched?.handlers) return 'none'
    const direct = matched.handlers[method] ?? matched.handlers.all
    if (direct) return direct
    matcher ??= toRouteMatcher(router)
    for (const match of (matcher.matchAll(path) as RouteNode[]).reverse()) {
      const target = match.handlers[method] ?? match.handlers.all
      if (target) return target
    }
    return 'none'
  }
}

const NEEDS_NORMALIZING = /[;%\\A-Z]|\/\//

/**
 * Other spellings a backend may read as the same path: ';' parameters removed, '\' as '/', repeated slashes folded,
 * one more round of percent-decoding, lower case. Up to three rounds; only for paths that hold such characters.
 */
export function pathSpellings(path: string): string[] {
  if (!NEEDS_NORMALIZING.test(path)) return []
  const spellings = new Set<string>()
  let text = path
  for (let round = 0; round < 3; round++) {
    const plain = text.replace(/\\/g, '/').split('/').map(segment => segment.split(';')[0]).join('/').replace(/\/{2,}/g, '/')
    spellings.add(plain)
    spellings.add(plain.toLowerCase())
    let decoded: string
    try {
      decoded = decodeURIComponent(plain)
    }
    catch {
      break
    }
    if (decoded === text) break
    text = decoded
  }
  spellings.delete(path)
  return [...spellings]
}

export type ApiDecision = 'proxy' | 'route' | 'refuse'

/**
 * How a request under /api is served: by the proxy, by a route of the app (Nitro's own decision), or refused
 * because another spelling of its path belongs to a route of the app (an app route guarding a backend path must not
 * be bypassed by `/api//health`, `/api/health;x` or `/api/HEALTH`).
 */
export function decideApiRequest(decide: RouteDecider, path: string, method: string): ApiDecision {
  const target = decide(path, method)
  if (target !== 'proxy') return 'route'
  for (const spelling of pathSpellings(path)) {
    if (decide(spelling, method) === 'route') return 'refuse'
  }
  return 'proxy'
}

/** Paths longer than this are decided every time: remembering long (likely hostile) paths would only hold memory. */
const REMEMBERED_PATH_MAX = 256
/** Decisions remembered at most; when full, the memory starts over. */
const REMEMBERED_MAX = 1024

/**
 * decideApiRequest, remembered per (method, path): the decision is a pure function of the two and of the build's
 * routes, and a radix lookup through the wildcard routes costs ~1.5 µs, a few % of a proxied request. A client that
 * sends ever new paths costs one lookup each, as without the memory.
 */
export function rememberedApiDecisions(decide: RouteDecider): (path: string, method: string) => ApiDecision {
  const remembered = new Map<string, ApiDecision>()
  return (path, method) => {
    if (path.length > REMEMBERED_PATH_MAX) return decideApiRequest(decide, path, method)
    const key = `${method} ${path}` // a method never holds a space
    let decision = remembered.get(key)
    if (decision === undefined) {
      decision = decideApiRequest(decide, path, method)
      if (remembered.size >= REMEMBERED_MAX) remembered.clear()
      remembered.set(key, decision)
    }
    return decision
  }
}
