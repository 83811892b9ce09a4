/**
 * The one redirect rule, for every place a redirect is produced (GET /auth/logout's Location, the login page's server
 * render and its navigation after login, the route guard, useAuth().logout()): a target is resolved as a browser
 * resolves it, by the WHATWG URL parser (dot segments, encoded dots, backslashes, tabs and newlines included), against
 * the gateway's own origin. It is kept only when it stays on that origin and is a path (it starts with '/'); what is
 * sent is then the resolved path, query and fragment, never the raw input. Anything else is the home path.
 */

/** An origin of our own that no request can name: only the path, query and fragment of a result depend on the input. */
const OWN_ORIGIN = 'http://gateway.invalid'

/**
 * The path a browser would open for `value` on the gateway's own origin (`/a/../b?x#y` is `/b?x#y`, non-ASCII
 * percent-encoded), or undefined when it would leave the origin, is not a path, or resolves to a protocol-relative
 * `//host` path (`/.//evil.test`, `/%2e%2e//evil.test`): sent as a Location, that would leave the origin.
 */
export function internalPath(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2048 || value[0] !== '/') return undefined
  let url: URL
  try {
    url = new URL(value, OWN_ORIGIN)
  }
  catch {
    return undefined
  }
  if (url.origin !== OWN_ORIGIN) return undefined
  const path = `${url.pathname}${url.search}${url.hash}`
  // Percent-encoding can make the result far longer than the input: a Location of 18 KB breaks proxies in front.
  return path.startsWith('//') || path.length > 2048 ? undefined : path
}

/** Whether `value` resolves to a path on the gateway's own origin (see internalPath). */
export function isInternalPath(value: unknown): value is string {
  return internalPath(value) !== undefined
}

/** The resolved internal path of `value`, else that of `fallback`, else '/'. */
export function safeRedirect(value: unknown, fallback: unknown = '/'): string {
  return internalPath(value) ?? internalPath(fallback) ?? '/'
}

/** An internal path made safe for a Location header: every non-ASCII or unprintable character percent-encoded. */
export function encodeLocation(path: string): string {
  try {
    return path.replace(/[^\x21-\x7E]/gu, char => encodeURIComponent(char))
  }
  catch {
    return '/'
  }
}
