import type { AuthUser } from '../../shared/types'
import type { SessionPayload } from '../core/session/seal'

/**
 * The token records this process has read or written, by session id: the steady state's lookup (a map probe, no Redis,
 * no provider call), for the main token and the tokens of routes' audiences alike. Also what a record is, and what a
 * store of records offers (token-store.ts in memory, redis-token-store.ts in Redis).
 */

/** An access token of a session: the main one's fields, or one kept for a route's audience. */
export interface KeptToken {
  accessToken: string
  /** When the access token expires and when it was obtained (ms since the epoch). */
  expiresAt: number
  obtainedAt: number
}

/** One session's tokens and what a revocation of it needs. */
export interface TokenRecord {
  /** Our session id (svc_session's `sid`), its issue time and user id: what revokeSession takes. */
  sid: string
  iat: number
  userId: string
  /** The user as mapped at login, whole (the cookie may hold it trimmed to fit 4 KB). */
  user?: AuthUser
  /** The provider's subject and session id (`sid` claim), for back-channel logout. */
  sub: string
  providerSid?: string
  accessToken: string
  refreshToken?: string
  idToken?: string
  /** When the access token expires and when it was obtained (ms since the epoch). */
  expiresAt: number
  obtainedAt: number
  /**
   * Access tokens for the audiences of routes (APP_API_ROUTES_FILE's `resource` / `scope`), by the audience's key:
   * obtained with the session's refresh token, which each of those refreshes may rotate.
   */
  audiences?: Record<string, KeptToken>
  /** Bumped by each refresh, of any of its tokens: an instance that waited for another's refresh knows it happened. */
  generation: number
  /** The login's ID token `acr` and `auth_time` (seconds), for step-up checks. */
  acr?: string
  authTime?: number
}

const cache = new Map<string, TokenRecord>()
const MAX_CACHED = 50_000

/** This process's copy of a session's record. */
export function cachedTokens(sid: string): TokenRecord | undefined {
  return cache.get(sid)
}

/** Keeps a record read or written here as this process's copy (the oldest pushed out past 50,000 sessions). */
export function remember(record: TokenRecord): void {
  if (!cache.has(record.sid) && cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!)
  cache.set(record.sid, record)
}

/** Forgets a session's tokens in this process (logout, back-channel logout). */
export function forgetTokens(sid: string): void {
  cache.delete(sid)
}

/** A record's token for an audience (its key: core/config/types.ts's RouteAudience), or its main token without one. */
export function tokenFor(record: TokenRecord, audienceKey?: string): KeptToken | undefined {
  return audienceKey === undefined ? record : record.audiences?.[audienceKey]
}

/**
 * Renew this long before the expiry: a quarter of the token's life, at most 30 s (a 5-minute token is renewed
 * 30 s before its end, a 20-second test token 5 s before).
 */
export function renewalMargin(token: Pick<KeptToken, 'expiresAt' | 'obtainedAt'>): number {
  return Math.min(30_000, Math.max(0, (token.expiresAt - token.obtainedAt) / 4))
}

/** Whether a token is used as it is (not yet in its renewal margin). */
export function fresh(token: KeptToken, now = Date.now()): boolean {
  return token.expiresAt - now > renewalMargin(token)
}

/** Whether a token may still be sent (not expired), fresh or not: what a failed renewal falls back on. */
export function alive(token: KeptToken | undefined, now = Date.now()): token is KeptToken {
  return !!token && token.expiresAt > now
}

/** When a token answer's access token expires: `expires_in`, else the session's end. */
export function expiryOf(tokens: { expires_in?: number }, now: number, sessionEnd: number): number {
  return typeof tokens.expires_in === 'number' && tokens.expires_in > 0 ? now + tokens.expires_in * 1000 : sessionEnd
}

/**
 * The user of an OpenID session as mapped at login, whole: the cookie's copy may have dropped permissions or roles to
 * fit 4 KB (this process's record, once the session's token has been looked up here; else the cookie's).
 */
export function oidcSessionUser(session: SessionPayload): AuthUser {
  return cache.get(session.sid)?.user ?? session.user
}

/** Where the records live, beside the sessions (token-store.ts: which one this process uses). */
export interface TokenStore {
  get: (sid: string) => Promise<TokenRecord | undefined>
  /**
   * Keeps the record until `until` (ms since the epoch; the session's end) and indexes it. `renewed`: a renewal's
   * result (the provider may have rotated the refresh token already): when Redis does not take it, it is still written
   * once Redis answers again, and so is the refresh lock's release.
   */
  put: (record: TokenRecord, until: number, renewed?: boolean) => Promise<void>
  delete: (record: Pick<TokenRecord, 'sid' | 'sub' | 'providerSid'>) => Promise<void>
  /** Our session ids of a provider subject, or of one provider session. */
  sessionsOf: (by: { sub: string } | { providerSid: string }) => Promise<string[]>
  /** The refresh lock of a session: a release function, or undefined while another holder has it. */
  lock: (sid: string, ms: number) => Promise<(() => Promise<void>) | undefined>
  /** Whether someone holds the refresh lock of a session now. */
  locked: (sid: string) => Promise<boolean>
  /** Who holds the refresh lock of a session now (what a wait that came to its deadline logs). */
  lockHolder: (sid: string) => Promise<'none' | 'this instance' | 'another instance'>
  /** Whether a back-channel logout token's `jti` is new (remembered until `until`). */
  firstUse: (jti: string, until: number) => Promise<boolean>
  /** Forgets a `jti` whose logout could not be carried out (the provider may send it again). */
  forgetUse: (jti: string) => Promise<void>
}

/** A value read out of a store is a record when it has a record's fields. */
export function isRecord(value: unknown): value is TokenRecord {
  const record = value as Partial<TokenRecord> | null
  return !!record && typeof record === 'object' && typeof record.sid === 'string' && typeof record.accessToken === 'string'
    && typeof record.expiresAt === 'number' && typeof record.generation === 'number' && typeof record.sub === 'string'
}
