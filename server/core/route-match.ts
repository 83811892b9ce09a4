/** Matching request paths against Nitro route patterns ('/api/users/:id', '/api/files/**'). Pure. */

export type PathMatcher = (path: string) => boolean

/** A matcher for one Nitro route pattern: ':name' is one segment, '**' (or '**:name') the rest, possibly empty. */
export function compileRoute(pattern: string): PathMatcher {
  const parts = pattern.split('/').filter(Boolean)
  return (path) => {
    const segments = path.split('/').filter(Boolean)
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!
      if (part === '**' || part.startsWith('**:')) return true
      const segment = segments[i]
      if (segment === undefined) return false
      if (part.startsWith(':')) continue
      if (part !== segment) return false
    }
    return segments.length === parts.length
  }
}

/** One matcher for several patterns. */
export function compileRoutes(patterns: readonly string[]): PathMatcher {
  const matchers = patterns.map(compileRoute)
  return path => matchers.some(match => match(path))
}
