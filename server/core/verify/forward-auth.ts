/**
 * GET /auth/verify, the forward-auth check nginx (`auth_request`), Traefik (`forwardAuth`) and Caddy (`forward_auth`)
 * ask before passing a request to a service that is not Nuxt: what it is asked, the headers of a yes, and the login
 * redirect of a browser navigation. Pure.
 */
import { hasAllPermissions, hasAnyPermission } from '../../../shared/permissions'
import { internalPath } from '../../../shared/redirect'
import type { AuthUser } from '../../../shared/types'

/** The permissions a check asks for: every one of `all`, and one of `any` when that is not empty. */
export interface VerifyQuery {
  all: string[]
  any: string[]
}

/** At most this many permissions of each kind, each at most this long: a longer query is a mistake or an attack. */
const MAX_PERMISSIONS = 32
const MAX_PERMISSION_LENGTH = 512

/**
 * The query of /auth/verify (`?permission=/a&permission=/b`: all needed; `?any=/c&any=/d`: one of them), or undefined
 * when it holds anything else: an unknown name (`?permision=` would otherwise let everyone in), an empty value, too
 * many or too long values.
 */
export function parseVerifyQuery(search: string): VerifyQuery | undefined {
  const query: VerifyQuery = { all: [], any: [] }
  let params: URLSearchParams
  try {
    params = new URLSearchParams(search)
  }
  catch {
    return undefined
  }
  for (const [name, value] of params) {
    const list = name === 'permission' ? query.all : name === 'any' ? query.any : undefined
    if (!list || !value || value.length > MAX_PERMISSION_LENGTH || list.length >= MAX_PERMISSIONS) return undefined
    list.push(value)
  }
  return query
}

/**
 * A name a check's own query could mean as one of its own: `permission`, `any`, and their misspellings and other
 * spellings (`permision`, `Permissions`, `premission`, `any_of`), compared on letters alone.
 */
const ASKING_NAME = /^(?:p[er]{2}m|any)/i

/**
 * The permissions a check asks for, from the query of its address (`search`, without '?') and what a trusted proxy
 * says the client asked for (X-Forwarded-Uri). A query the check can read is always the check's own, even when the
 * client sent the same one: `/grafana/?permission=/grafana/view` through a check that asks `?permission=/grafana/view`
 * still needs that permission (were a copy of the client's query taken for the client's, a client could name its page's
 * permission in its own URL and be let in without it). A proxy that keeps the client's query on an address without one
 * of its own (Caddy's `forward_auth` with `uri /auth/verify`: `/grafana/d/x?orgId=1` is checked as
 * `/auth/verify?orgId=1`) carries the client's query in: a query the check cannot read that is exactly the query of
 * X-Forwarded-Uri is the client's, and asks for nothing, unless one of its names could be the check's (ASKING_NAME).
 * Such a query, or any other the check cannot read, is refused: a typo in the check's own address (`?permision=`)
 * never lets anyone in, not even a client that copies the typo into its URL.
 */
export function checkQuery(search: string, forwardedUri: string | undefined): VerifyQuery | undefined {
  const own = parseVerifyQuery(search)
  if (own) return own
  if (forwardedUri === undefined || search !== queryOf(forwardedUri)) return undefined
  const names = [...new URLSearchParams(search).keys()]
  return names.some(name => ASKING_NAME.test(name.replace(/[^a-z]/gi, ''))) ? undefined : { all: [], any: [] }
}

/** The query of a request target, without its '?' ('' when it has none). */
function queryOf(target: string): string {
  const at = target.indexOf('?')
  return at === -1 ? '' : target.slice(at + 1)
}

/** Whether the user holds every permission of `all` and, when `any` names some, one of them. */
export function isAllowed(user: AuthUser, query: VerifyQuery): boolean {
  return hasAllPermissions(user, query.all) && hasAnyPermission(user, query.any)
}

/** The headers a yes sets, in the order a protected service reads them. */
export const AUTH_REQUEST_HEADERS = ['x-auth-request-user', 'x-auth-request-user-id', 'x-auth-request-email', 'x-auth-request-roles'] as const

/**
 * A value made safe for a header: control characters (CR and LF among them), non-ASCII, '%' and, in a list, ','
 * percent-encoded, so that `decodeURIComponent` gives the value back and a list splits on ',' alone.
 */
export function headerValue(value: string, listItem = false): string {
  const unsafe = listItem ? /[^\x20-\x24\x26-\x2B\x2D-\x7E]/gu : /[^\x20-\x24\x26-\x7E]/gu
  return value.replace(unsafe, (char) => {
    try {
      return encodeURIComponent(char)
    }
    catch {
      // A lone surrogate: no character to send.
      return ''
    }
  })
}

/**
 * What a protected service is told of the user (DECISIONS, forward-auth headers): X-Auth-Request-User is the e-mail
 * when there is one, else the user id; -User-Id the id; -Email the e-mail; -Roles the role codes joined by commas.
 * Every header is always set, empty when there is nothing to say, so that a proxy copying them replaces whatever a
 * client sent under those names.
 */
export function authRequestHeaders(user: AuthUser): Record<(typeof AUTH_REQUEST_HEADERS)[number], string> {
  return {
    'x-auth-request-user': headerValue(user.email || user.id),
    'x-auth-request-user-id': headerValue(user.id),
    'x-auth-request-email': headerValue(user.email),
    'x-auth-request-roles': user.roles.map(role => headerValue(role, true)).join(','),
  }
}

/** What the proxy in front says of the request it is checking (believed only from a trusted proxy). */
export interface ForwardedRequest {
  /** X-Forwarded-Proto and -Host as the gateway believes them. */
  proto: string
  host: string
  /** X-Forwarded-Uri: the path and query the browser asked for (Traefik, Caddy, and the nginx configuration's 401 page). */
  uri: string | undefined
  /** X-Forwarded-Method; absent means GET. */
  method: string | undefined
}

/** What the browser said of its request: a navigation (Sec-Fetch-Mode), or, from a browser without it, HTML asked for. */
export interface BrowserHints {
  secFetchMode: string | undefined
  accept: string | undefined
}

/**
 * Whether a refused check should send the browser to the login page (302) rather than answer 401: a GET or HEAD
 * navigation of a page, whose URL the proxy passed on (X-Forwarded-Uri). nginx's `auth_request` is never given
 * X-Forwarded-Uri (deploy/nginx-forward-auth.conf clears it), since it takes only 2xx, 401 and 403.
 */
export function wantsLoginRedirect(forwarded: ForwardedRequest | undefined, hints: BrowserHints): forwarded is ForwardedRequest & { uri: string } {
  if (!forwarded?.uri) return false
  const method = (forwarded.method ?? 'GET').toUpperCase()
  if (method !== 'GET' && method !== 'HEAD') return false
  if (hints.secFetchMode) return hints.secFetchMode === 'navigate'
  return /\btext\/html\b/i.test(hints.accept ?? '')
}

/**
 * Where a refused navigation goes: the gateway's login page (a path: the browser stays on the origin it asked, where
 * the proxy serves the gateway's /auth/* routes) with `redirect` the URL it asked for, rebuilt from
 * X-Forwarded-Proto/-Host/-Uri and kept by the one redirect rule: on the request's own origin, its path and query
 * (shared/redirect.ts internalPath); on another origin listed in APP_TRUSTED_ORIGINS, the absolute URL; anything
 * else, the home path.
 */
export function loginLocation(forwarded: ForwardedRequest & { uri: string }, trustedOrigins: readonly string[]): string {
  return `/auth/login?redirect=${encodeURIComponent(redirectTarget(forwarded, trustedOrigins))}`
}

function redirectTarget(forwarded: ForwardedRequest & { uri: string }, trustedOrigins: readonly string[]): string {
  if (forwarded.uri.length > 2048 || (forwarded.proto !== 'http' && forwarded.proto !== 'https')) return '/'
  let own: URL
  let target: URL
  try {
    own = new URL(`${forwarded.proto}://${forwarded.host}`)
    target = new URL(forwarded.uri, own)
  }
  catch {
    return '/'
  }
  if (own.pathname !== '/' || own.username || own.password) return '/'
  if (target.origin === own.origin) return internalPath(`${target.pathname}${target.search}`) ?? '/'
  if ((target.protocol === 'https:' || target.protocol === 'http:') && !target.username && !target.password
    && trustedOrigins.includes(target.origin)) return target.href
  return '/'
}
