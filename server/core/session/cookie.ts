/** Building Set-Cookie lines and reading the Cookie header, with the 4 KB budget. Pure. */

export const SESSION_COOKIE = 'svc_session'
export const DEVICE_COOKIE = 'svc_device'
/** When the session goes idle (ms), readable by the browser's script (no secret in it): APP_SESSION_IDLE_TIMEOUT only. */
export const IDLE_COOKIE = 'svc_idle'
/** The whole `Set-Cookie: ...` line must fit here, or browsers drop the cookie silently. */
export const COOKIE_BUDGET_BYTES = 4096

export interface CookieOptions {
  maxAgeSeconds: number
  secure: boolean
  /** @default '/' */
  path?: string
  /** false: the page's script may read it (a value without any secret). @default true */
  httpOnly?: boolean
}

/** A Set-Cookie value: HttpOnly (unless told otherwise), SameSite=Lax, Path=/ (or `path`), Secure unless told otherwise. */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  const parts = [`${name}=${value}`, `Max-Age=${options.maxAgeSeconds}`, `Path=${options.path ?? '/'}`, ...(options.httpOnly === false ? [] : ['HttpOnly']), 'SameSite=Lax']
  if (options.maxAgeSeconds > 0) parts.splice(2, 0, `Expires=${new Date(Date.now() + options.maxAgeSeconds * 1000).toUTCString()}`)
  else parts.splice(2, 0, 'Expires=Thu, 01 Jan 1970 00:00:00 GMT')
  if (options.secure) parts.push('Secure')
  return parts.join('; ')
}

/** Size of the header line a Set-Cookie value makes, in bytes. */
export function setCookieLineBytes(setCookie: string): number {
  return Buffer.byteLength(`Set-Cookie: ${setCookie}`)
}

/**
 * A cookie-pair without the white space around it: SP and HTAB alone (RFC 6265). `trim()` would also take U+00A0 and
 * the other Unicode spaces, which the proxies in front do not take for white space: a `\xa0svc_session=` pair would be
 * the session to the gateway and no session cookie to an nginx or Caddy rule that keeps it from a service.
 */
function trimPair(part: string): string {
  return part.replace(/^[ \t]+|[ \t]+$/g, '')
}

/** Every value of one cookie in a Cookie header, in order, without decoding. */
export function cookieValues(header: string | undefined, name: string): string[] {
  if (!header || !header.includes(name)) return []
  const prefix = `${name}=`
  const values: string[] = []
  for (const part of header.split(';')) {
    const trimmed = trimPair(part)
    if (trimmed.startsWith(prefix)) values.push(trimmed.slice(prefix.length))
  }
  return values
}

/** The value of one cookie from a Cookie header (first occurrence), without decoding. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  return cookieValues(header, name)[0]
}

/**
 * The value of a cookie that must be unique: undefined when it is missing or sent more than once (a sibling
 * subdomain can plant a second one, which browsers may send first).
 *
 * The same answer as taking cookieValues and keeping a lone value. The usual header (`name=` starts its part and
 * does not occur after that part) is read in place: the /api proxy reads a 3.5 KB cookie on every request, and this
 * scans it once, for the ';' that ends it. Any other header goes through cookieValues.
 */
export function readSingleCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined
  const prefix = `${name}=`
  const at = header.indexOf(prefix)
  if (at === -1) return undefined
  const partStart = header.lastIndexOf(';', at) + 1
  const end = header.indexOf(';', at)
  // `xsvc_session=`, `a=svc_session=`: not the cookie's name, and a later part may hold it; so may any part after this one.
  if ((partStart === at || /^[ \t]*$/.test(header.slice(partStart, at))) && (end === -1 || !header.includes(prefix, end))) {
    let stop = end === -1 ? header.length : end
    while (stop > at + prefix.length && (header.charCodeAt(stop - 1) === 32 || header.charCodeAt(stop - 1) === 9)) stop--
    return header.slice(at + prefix.length, stop)
  }
  const values = cookieValues(header, name)
  return values.length === 1 ? values[0] : undefined
}
