/**
 * Step-up authentication (OpenID Connect `acr`/`auth_time`, RFC 9470): what a route or the whole gateway needs of a
 * session's login, whether the session has it, and a backend's challenge asking for more. Pure.
 */
import type { StepUpHint } from '../../../shared/types'

/** An authentication level asked for: one of `acr` (empty: any), and a login at most `maxAge` seconds old. */
export interface AuthLevelNeed {
  acr: readonly string[]
  maxAge?: number
}

/** A session's level: its ID token's `acr` and `auth_time` (seconds since the epoch), as the login gave them. */
export interface AuthLevel {
  acr?: string
  authTime?: number
}

/** An acr value as OAuth writes one (a token without spaces or quotes), at most 200 characters. */
const ACR_VALUE = /^[\x21\x23-\x5B\x5D-\x7E]{1,200}$/
const MAX_ACR_VALUES = 10

/** `acr_values` text (space-separated) as a list; undefined when one of them is not an acr value. */
export function parseAcrValues(text: string): string[] | undefined {
  const values = text.split(' ').filter(Boolean)
  return values.length <= MAX_ACR_VALUES && values.every(value => ACR_VALUE.test(value)) ? values : undefined
}

/** A max age in seconds: a whole number from 0 to a year; undefined otherwise. */
export function parseMaxAge(value: unknown): number | undefined {
  const number = typeof value === 'string' && /^\d{1,8}$/.test(value) ? Number(value) : value
  return typeof number === 'number' && Number.isInteger(number) && number >= 0 && number <= 31_536_000 ? number : undefined
}

/** Two needs as one: the narrower acr list (the first's when both set one), the shorter max age. Undefined: none. */
export function combineNeeds(first: AuthLevelNeed | undefined, second: AuthLevelNeed | undefined): AuthLevelNeed | undefined {
  if (!first || !second) return first ?? second
  const ages = [first.maxAge, second.maxAge].filter((age): age is number => age !== undefined)
  return { acr: first.acr.length ? first.acr : second.acr, ...(ages.length ? { maxAge: Math.min(...ages) } : {}) }
}

/** A need from its parts; undefined when it asks nothing. */
export function needOf(acr: readonly string[] | undefined, maxAge: number | undefined): AuthLevelNeed | undefined {
  return acr?.length || maxAge !== undefined ? { acr: acr ?? [], ...(maxAge !== undefined ? { maxAge } : {}) } : undefined
}

/** Whether a session's level meets a need (a claim the need looks at and the session lacks is unmet). */
export function meetsNeed(level: AuthLevel | undefined, need: AuthLevelNeed | undefined, nowMs: number): boolean {
  if (!need) return true
  if (need.acr.length && !(level?.acr !== undefined && need.acr.includes(level.acr))) return false
  if (need.maxAge !== undefined && !(level?.authTime !== undefined && nowMs / 1000 - level.authTime <= need.maxAge)) return false
  return true
}

/** The need as the page's hint. */
export function stepUpHint(need: AuthLevelNeed): StepUpHint {
  return { acr: need.acr.length ? need.acr.join(' ') : null, maxAge: need.maxAge ?? null }
}

/** The query of /auth/sso that asks the provider for a need (`acr_values`, `max_age`), without the leading '&'. */
export function stepUpQuery(need: AuthLevelNeed): string {
  const query = new URLSearchParams()
  if (need.acr.length) query.set('acr_values', need.acr.join(' '))
  if (need.maxAge !== undefined) query.set('max_age', String(need.maxAge))
  return query.toString()
}

/**
 * The need of a backend's RFC 9470 challenge: a `WWW-Authenticate: Bearer error="insufficient_user_authentication"`
 * with `acr_values` and/or `max_age`; undefined for any other header (or none).
 */
export function challengedNeed(header: string | readonly string[] | undefined): AuthLevelNeed | undefined {
  for (const line of [header ?? []].flat()) {
    if (!/(?:^|,)\s*Bearer\s/i.test(line)) continue
    // auth-param = token "=" ( token / quoted-string ), RFC 9110 §11.2
    const parameters = new Map<string, string>()
    for (const match of line.matchAll(/([\w-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]+))/g)) parameters.set(match[1]!.toLowerCase(), (match[2] ?? match[3] ?? '').replace(/\\(.)/g, '$1'))
    if (parameters.get('error') !== 'insufficient_user_authentication') continue
    const acr = parseAcrValues(parameters.get('acr_values') ?? '') ?? []
    const maxAge = parameters.has('max_age') ? parseMaxAge(parameters.get('max_age')) : undefined
    return { acr, ...(maxAge !== undefined ? { maxAge } : {}) }
  }
  return undefined
}
