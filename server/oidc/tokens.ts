import * as client from 'openid-client'
import type { AuthUser } from '../../shared/types'
import type { AuthLevel } from '../core/session/auth-level'
import { sessionEndsAt, type SessionPayload } from '../core/session/seal'
import { GatewayError, MESSAGES } from '../http/errors'
import { auditLine } from '../ops/audit'
import { useGatewayConfig } from '../ops/config'
import { useLogger } from '../ops/logger'
import { revokeSession } from '../session/revocations'
import { hintOnClientRefusal } from './client-auth'
import { refreshingClient, tokenAuthMethod } from './provider'
import { useTokenStore, type TokenRecord } from './token-store'

/**
 * The access token of an OpenID session, renewed with its refresh token before it expires.
 * - Steady state: a map lookup in this process (no Redis, no provider call).
 * - Near the expiry, one refresh per session at a time: in this process (one promise shared by every request that
 *   needs it) and across instances (a lock in Redis; an instance that finds it taken waits for the other's result in
 *   the store instead of using the same refresh token, which a rotating provider would take for a replay and answer
 *   by revoking the whole grant).
 * - A refresh the provider refuses (`invalid_grant`: the grant was revoked, the user logged out there) ends the session
 *   on every instance; a provider that does not answer keeps the current token while it lives, then 502.
 */

/** Records this process has read or written, by session id (the steady state's lookup). */
const cache = new Map<string, TokenRecord>()
const MAX_CACHED = 50_000
/** Refreshes under way in this process, by session id. */
const flights = new Map<string, Promise<string | undefined>>()
/** How long a refresh may hold the lock (its provider call's timeout and a margin), and another instance waits. */
const lockMs = () => useGatewayConfig().config.iamTimeoutSeconds * 1000 + 5_000
const WAIT_STEP_MS = 50

/** The token store did not answer (Redis down) and this process has no usable token: 503, the session kept. */
const storeDown = () => new GatewayError(503, MESSAGES.tokenStoreUnavailable)

/**
 * Renew this long before the expiry: a quarter of the token's life, at most 30 s (a 5-minute token is renewed
 * 30 s before its end, a 20-second test token 5 s before).
 */
export function renewalMargin(record: Pick<TokenRecord, 'expiresAt' | 'obtainedAt'>): number {
  return Math.min(30_000, Math.max(0, (record.expiresAt - record.obtainedAt) / 4))
}

function fresh(record: TokenRecord, now = Date.now()): boolean {
  return record.expiresAt - now > renewalMargin(record)
}

function remember(record: TokenRecord): void {
  if (!cache.has(record.sid) && cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!)
  cache.set(record.sid, record)
}

/** The login level (`acr`, `auth_time`) of an OpenID session whose tokens this process has read; undefined otherwise. */
export function oidcSessionLevel(session: SessionPayload): AuthLevel | undefined {
  const record = cache.get(session.sid)
  return record && { acr: record.acr, authTime: record.authTime }
}

/** Forgets a session's tokens in this process (logout, back-channel logout). */
export function forgetTokens(sid: string): void {
  cache.delete(sid)
}

/** When a token answer's access token expires: `expires_in`, else the session's end. */
export function expiryOf(tokens: { expires_in?: number }, now: number, sessionEnd: number): number {
  return typeof tokens.expires_in === 'number' && tokens.expires_in > 0 ? now + tokens.expires_in * 1000 : sessionEnd
}

/** Keeps a new session's tokens (at the callback). */
export async function keepTokens(record: TokenRecord): Promise<void> {
  await (await useTokenStore()).put(record, sessionEndsAt(record))
  remember(record)
}

/** The record of a session: this process's copy, else the store's. */
export async function tokensOf(sid: string): Promise<TokenRecord | undefined> {
  return cache.get(sid) ?? (await useTokenStore()).get(sid)
}

/**
 * The user of an OpenID session as mapped at login, whole: the cookie's copy may have dropped permissions or roles to
 * fit 4 KB (this process's record, once the session's token has been looked up here; else the cookie's).
 */
export function oidcSessionUser(session: SessionPayload): AuthUser {
  return cache.get(session.sid)?.user ?? session.user
}

/**
 * The access token to send for an OpenID session: at once (a string) in the steady state, else a promise (first use
 * in this process, or a renewal). Undefined when the session has no tokens any more (ended, or lost with a memory
 * store's process).
 */
export function oidcAccessToken(session: SessionPayload): string | undefined | Promise<string | undefined> {
  const record = cache.get(session.sid)
  if (record && fresh(record)) return record.accessToken
  let flight = flights.get(session.sid)
  if (!flight) {
    flight = renew(session).finally(() => flights.delete(session.sid))
    flights.set(session.sid, flight)
  }
  return flight
}

async function renew(session: SessionPayload): Promise<string | undefined> {
  const store = await useTokenStore()
  const cached = cache.get(session.sid)
  let known: TokenRecord | undefined
  try {
    known = await store.get(session.sid)
  }
  catch {
    // Redis down: this process's copy while its token lives; no copy is no answer, not "logged out".
    if (cached && cached.expiresAt > Date.now()) return cached.accessToken
    throw storeDown()
  }
  // Only a store that answered "none" ends the session here.
  if (!known) return undefined
  remember(known)
  if (fresh(known)) return known.accessToken
  if (!known.refreshToken) return known.expiresAt > Date.now() ? known.accessToken : undefined
  let release: (() => Promise<void>) | undefined
  try {
    release = await store.lock(session.sid, lockMs())
  }
  catch {
    if (known.expiresAt > Date.now()) return known.accessToken
    throw storeDown()
  }
  if (!release) return waitForOther(session.sid, known)
  try {
    // Another instance may have renewed it between our read and our lock (a store that fails now: ours is the latest).
    const latest = await store.get(session.sid).catch(() => known)
    if (latest && latest.generation > known.generation) {
      remember(latest)
      return latest.accessToken
    }
    return await refresh(session, latest ?? known)
  }
  finally {
    await release()
  }
}

/** Another instance holds the refresh lock: its result appears in the store (a new generation). */
async function waitForOther(sid: string, known: TokenRecord): Promise<string | undefined> {
  const store = await useTokenStore()
  for (let waited = 0, limit = lockMs(); waited < limit; waited += WAIT_STEP_MS) {
    await new Promise(resolve => setTimeout(resolve, WAIT_STEP_MS))
    let latest: TokenRecord | undefined
    try {
      latest = await store.get(sid)
    }
    catch {
      continue // Redis did not answer this time: ask again
    }
    if (!latest) return undefined // the other instance ended the session
    if (latest.generation > known.generation) {
      remember(latest)
      return latest.accessToken
    }
  }
  if (known.expiresAt > Date.now()) return known.accessToken
  throw new GatewayError(502, MESSAGES.iamUnreachable)
}

async function refresh(session: SessionPayload, record: TokenRecord): Promise<string | undefined> {
  const now = Date.now()
  let tokens: Awaited<ReturnType<typeof client.refreshTokenGrant>>
  try {
    tokens = await client.refreshTokenGrant(refreshingClient(), record.refreshToken!)
  }
  catch (error) {
    // Only the grant's refusal ends the session: a client error (invalid_client, a secret rotated too early) or a
    // provider that does not answer must not log everyone out.
    if (error instanceof client.ResponseBodyError && error.error === 'invalid_grant') {
      // The provider ended the grant: so does the gateway, on every instance.
      await endOidcSession(record, 'refresh refused')
      return undefined
    }
    useLogger().warn({ error: (error as Error).message }, 'không làm mới được access token tại OpenID Provider.')
    hintOnClientRefusal(error, tokenAuthMethod(), useGatewayConfig().config.oidc!.clientId)
    if (record.expiresAt > Date.now()) return record.accessToken
    throw new GatewayError(502, MESSAGES.iamUnreachable)
  }
  const next: TokenRecord = {
    ...record,
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token ?? record.refreshToken,
    idToken: tokens.id_token ?? record.idToken,
    expiresAt: expiryOf(tokens, now, sessionEndsAt(session)),
    obtainedAt: now,
    generation: record.generation + 1,
  }
  await (await useTokenStore()).put(next, sessionEndsAt(session)).catch((error: Error) => {
    useLogger().error({ error: error.message }, 'không lưu được token OIDC mới vào Redis: các instance khác sẽ dùng token cũ.')
  })
  remember(next)
  return next.accessToken
}

/** Ends an OpenID session everywhere: revoked (every instance), its tokens dropped. */
export async function endOidcSession(record: TokenRecord, reason: string): Promise<void> {
  forgetTokens(record.sid)
  await revokeSession({ sid: record.sid, iat: record.iat, user: { id: record.userId } })
  auditLine('logout.provider', { userId: record.userId, reason })
  await (await useTokenStore()).delete(record).catch(() => undefined)
}
