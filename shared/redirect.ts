/**
 * Whether `value` is an internal path a browser cannot resolve to another origin:
 * it starts with exactly one '/', and holds no backslash, control character or whitespace
 * (browsers strip tabs and newlines and treat '\' as '/', so '/\t/evil' and '/\evil' leave the origin).
 */
export function isInternalPath(value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2048) return false
  if (value[0] !== '/' || value[1] === '/') return false
  // eslint-disable-next-line no-control-regex
  return !/[\\\s\u0000-\u001F\u007F-\u009F\u00A0\u1680\u2000-\u200F\u2028\u2029\u202F\u205F\u3000\uFEFF]/.test(value)
}

/** `value` when it is an internal path, else `fallback` (itself internal, else '/'). */
export function safeRedirect(value: unknown, fallback: unknown = '/'): string {
  if (isInternalPath(value)) return value
  return isInternalPath(fallback) ? fallback : '/'
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
