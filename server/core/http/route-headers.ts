/** The app's route rules `headers`, as they apply to the answers of proxied /api/** requests. Pure. */
import { createRouter, toRouteMatcher } from 'radix3'

/** One of Nitro's route rules that sets headers: its pattern and the headers. */
export interface HeaderRule {
  route: string
  headers: Record<string, string>
}

/** Paths longer than this are matched every time (remembering hostile paths would only hold memory). */
const REMEMBERED_PATH_MAX = 256
const REMEMBERED_MAX = 1024

/**
 * The headers the app's route rules give a router path, merged as Nitro merges route rules (the most specific
 * pattern wins a name), remembered per path; undefined when no rule sets any. Names are lower-case.
 */
export function ruleHeadersOf(rules: readonly HeaderRule[]): (path: string) => Record<string, string> | undefined {
  if (!rules.length) return () => undefined
  const matcher = toRouteMatcher(createRouter({ routes: Object.fromEntries(rules.map(rule => [rule.route, { headers: rule.headers }])) }))
  const remembered = new Map<string, Record<string, string> | undefined>()
  const compute = (path: string) => {
    // matchAll: the least specific first (as Nitro's getRouteRules reads it), so later ones override.
    const matches = matcher.matchAll(path) as { headers: Record<string, string> }[]
    if (!matches.length) return undefined
    const headers: Record<string, string> = {}
    for (const match of matches) for (const [name, value] of Object.entries(match.headers)) headers[name.toLowerCase()] = String(value)
    return headers
  }
  return (path) => {
    if (path.length > REMEMBERED_PATH_MAX) return compute(path)
    if (remembered.has(path)) return remembered.get(path)
    const headers = compute(path)
    if (remembered.size >= REMEMBERED_MAX) remembered.clear()
    remembered.set(path, headers)
    return headers
  }
}
