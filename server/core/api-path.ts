/** The backend path for a request under /api, from the raw request URL. Pure. */

/**
 * The path to request on the backend: the target's base path + what follows '/api' in the raw URL, joined as strings.
 * null when the URL is not under /api, holds malformed escapes, or any segment (decoded up to three times, split on
 * '/' and '\', ';' parameters removed) is '.' or '..',
 * so a request can never climb above the base path.
 */
export function backendPath(rawUrl: string, targetBasePath: string): string | null {
  if (!rawUrl.startsWith('/api')) return null
  const rest = rawUrl.slice(4)
  if (rest !== '' && rest[0] !== '/' && rest[0] !== '?') return null
  const queryAt = rest.indexOf('?')
  const path = queryAt === -1 ? rest : rest.slice(0, queryAt)
  if (climbs(path)) return null
  const base = targetBasePath === '/' ? '' : targetBasePath.replace(/\/+$/, '')
  const joined = `${base}${rest}`
  return joined.startsWith('/') ? joined : `/${joined}`
}

/** '.' or '..', once the segment's ';' parameters are removed (Tomcat and Jetty read '/..;/' as '/../'). */
function isDotSegment(segment: string): boolean {
  const name = segment.split(';')[0]
  return name === '.' || name === '..'
}

function climbs(path: string): boolean {
  // A dot segment needs a '.', literal or escaped: most paths have neither and need no splitting.
  if (!path.includes('.') && !path.includes('%')) return false
  let text = path
  for (let round = 0; round < 3; round++) {
    if (text.split(/[/\\]/).some(isDotSegment)) return true
    if (!text.includes('%')) return false
    let decoded: string
    try {
      decoded = decodeURIComponent(text)
    }
    catch {
      return true // malformed escapes: no telling how a backend decodes them
    }
    if (decoded === text) return false
    text = decoded
  }
  return true
}
