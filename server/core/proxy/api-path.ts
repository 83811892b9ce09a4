/** The backend path for a request under /api, from the raw request URL. Pure. */

/**
 * The path to request on the backend: the target's base path + what follows `prefix` ('/api', or a route's prefix)
 * in the raw URL, joined as strings. null when the raw URL does not start with the prefix as written (whole segments:
 * another spelling of a route's prefix is refused, never guessed), holds malformed escapes, or any segment (decoded up
 * to three times, split on '/' and '\\') is one a backend may read as another path (see isUnsafeSegment): a request
 * can never climb above the base path, nor reach a path the router did not see.
 */
export function backendPath(rawUrl: string, targetBasePath: string, prefix = '/api'): string | null {
  if (!rawUrl.startsWith(prefix)) return null
  const rest = rawUrl.slice(prefix.length)
  if (rest !== '' && rest[0] !== '/' && rest[0] !== '?') return null
  const queryAt = rest.indexOf('?')
  const path = queryAt === -1 ? rest : rest.slice(0, queryAt)
  if (climbs(path)) return null
  const base = targetBasePath === '/' ? '' : targetBasePath.replace(/\/+$/, '')
  const joined = `${base}${rest}`
  return joined.startsWith('/') ? joined : `/${joined}`
}

/** Characters a path needs for any of the checks below to matter; a plain path (the usual case) has none. */
// eslint-disable-next-line no-control-regex
const WORTH_A_LOOK = /[.%;\\\s\u0000-\u001F\u007F-\uFFFF]/

/**
 * A segment a backend may read as another path, or not as the router read it:
 * - '.' or '..', or any name that ends in '.' once its ';' parameters are removed (Tomcat and Jetty read '/..;/' as
 *   '/../'; Windows, IIS and some frameworks drop trailing dots, so 'revoke-user.' is 'revoke-user');
 * - a control character anywhere (NUL ends a C string; URL parsers drop tabs and newlines);
 * - white space at either end of the name (trimmed by some servers); white space inside a name stays ('a b');
 * - any of these once compatibility characters are folded (NFKC: '．．' is '..', '／' is '/').
 */
function isUnsafeSegment(segment: string): boolean {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001F\u007F-\u009F]/.test(segment)) return true
  const name = segment.split(';')[0]!
  if (name.endsWith('.') || /^\s|\s$/.test(name)) return true
  const folded = segment.normalize('NFKC')
  return folded !== segment && (/[/\\]/.test(folded) || isUnsafeSegment(folded))
}

function climbs(path: string): boolean {
  if (!WORTH_A_LOOK.test(path)) return false
  let text = path
  for (let round = 0; round < 3; round++) {
    // Folded first, so that an escape written in fullwidth ('％２ｅ') is decoded in the next round like any other.
    text = text.normalize('NFKC')
    if (text.split(/[/\\]/).some(isUnsafeSegment)) return true
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
