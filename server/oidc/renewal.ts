import * as client from 'openid-client'
import type { RouteAudience } from '../core/config/types'
import { sessionEndsAt, type SessionPayload } from '../core/session/seal'
import { GatewayError, MESSAGES } from '../http/errors'
import { auditLine } from '../ops/audit'
import { useGatewayConfig } from '../ops/config'
import { useLogger } from '../ops/logger'
import { OUTCOME_ATTRIBUTE, traced, type Span } from '../ops/tracing/spans'
import { revokeSession } from '../session/revocations'
import { hintOnClientRefusal } from './client-auth'
import { refreshingClient, tokenAuthMethod } from './provider'
import { alive, cachedTokens, expiryOf, forgetTokens, fresh, remember, tokenFor, type KeptToken, type TokenRecord } from './token-cache'
import { useTokenStore } from './token-store'

/**
 * The renewal of a session's access tokens with its refresh token: the main one, and each route audience's
 * (`resource` / `scope` of the routes file), all with the one refresh token of the session.
 * - One refresh per session at a time, whichever token it renews: in this process (tokens.ts shares one promise per
 *   token among the requests that need it) and across instances (a lock in Redis per session). A provider that rotates
 *   refresh tokens takes a refresh token used twice for a replay and revokes the whole grant; so the main token's
 *   renewal and an audience's are never under way together, and each writes the record back whole (the others'
 *   tokens kept) with the newest refresh token, under the lock. An instance that finds the lock taken waits for the
 *   other's result in the store; when that renewed another token of the session, it takes the lock in turn.
 * - A route's audience may instead be obtained by token exchange (RFC 8693, `exchange: true`): the session's main access
 *   token for one of that audience, under the same lock (the main token renewed first when due); the refresh token
 *   is then not used for it.
 * - A refresh the provider refuses with `invalid_grant` (the grant was revoked, the user logged out there) ends the
 *   session on every instance. Any other refusal, or a provider that does not answer, keeps the current token while
 *   it lives, then is 502: for an audience the provider refuses (invalid_target, invalid_scope, ...), on that route only.
 */

/** How long a refresh may hold the lock (its provider call's timeout and a margin), and another instance waits. */
const lockMs = () => useGatewayConfig().config.iamTimeoutSeconds * 1000 + 5_000
const WAIT_STEP_MS = 50
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange'
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token'

/** The token store did not answer (Redis down) and this process has no usable token: 503, the session kept. */
const storeDown = () => new GatewayError(503, MESSAGES.tokenStoreUnavailable)

/**
 * A fresh access token of the session for an audience (none: its main token), from the store or a refresh; undefined
 * when the session has no tokens any more.
 */
export async function renewToken(session: SessionPayload, audience?: RouteAudience): Promise<string | undefined> {
  const store = await useTokenStore()
  const key = audience?.key
  const deadline = Date.now() + lockMs()
  for (;;) {
    let known: TokenRecord | undefined
    try {
      known = await store.get(session.sid)
    }
    catch {
      // Redis down: this process's copy while its token lives; no copy is no answer, not "logged out".
      const cached = cachedTokens(session.sid)
      return aliveOr(cached && tokenFor(cached, key), storeDown())
    }
    // Only a store that answered "none" ends the session here.
    if (!known) return undefined
    known = newest(known)
    remember(known)
    const current = tokenFor(known, key)
    if (current && fresh(current)) return current.accessToken
    if (!known.refreshToken && !audience?.exchange) {
      if (alive(current)) return current.accessToken
      if (audience) throw new GatewayError(502, MESSAGES.audienceTokenRefused)
      return undefined
    }
    let release: (() => Promise<void>) | undefined
    try {
      release = await store.lock(session.sid, lockMs())
    }
    catch {
      return aliveOr(current, storeDown())
    }
    if (!release) {
      const latest = await waitForOther(session.sid, known.generation, deadline)
      if (latest === null) return undefined // the other instance ended the session
      if (latest === STORE_FAILED || !latest) {
        // Nothing before the deadline: the store failing meanwhile (a failover) is what kept it, else the provider.
        const lockHolder = await store.lockHolder(session.sid).catch(() => 'unknown (Redis did not answer)')
        useLogger().warn({ userId: session.user.id, storeFailed: latest === STORE_FAILED, lockHolder }, 'chờ instance khác làm mới token OIDC quá hạn (khoá làm mới của phiên vẫn bị giữ, hoặc Redis không trả lời).')
        return aliveOr(current, latest === STORE_FAILED ? storeDown() : new GatewayError(502, MESSAGES.iamUnreachable))
      }
      const token = tokenFor(latest, key)
      if (token && fresh(token)) return token.accessToken
      continue // it renewed another token of the session: the lock again, for ours
    }
    try {
      // Another instance may have renewed it between our read and our lock (a store that fails now: ours is the latest).
      const latest = newest(await store.get(session.sid).catch(() => known) ?? known)
      const token = tokenFor(latest, key)
      if (token && fresh(token)) {
        remember(latest)
        return token.accessToken
      }
      // A `renewal` span with tracing on (its outcome: renewed, refused or failed).
      return await traced('renewal', 'internal', {}, span => audience?.exchange ? exchange(session, latest, audience, span) : refresh(session, latest, audience, span))
    }
    finally {
      await release()
    }
  }
}

/**
 * The store's record, or this process's copy when that is of a later renewal: a store that lost the renewal's write
 * (a failover; it is written again once Redis answers) still holds the refresh token the provider has replaced.
 */
function newest(stored: TokenRecord): TokenRecord {
  const cached = cachedTokens(stored.sid)
  return cached && cached.generation > stored.generation ? cached : stored
}

/** A token's value while it lives, else the error thrown. */
function aliveOr(token: KeptToken | undefined, error: GatewayError): string {
  if (alive(token)) return token.accessToken
  throw error
}

/** waitForOther's answer when nothing came before the deadline and the store failed to answer meanwhile. */
const STORE_FAILED = 'store failed'

/**
 * Another instance holds the refresh lock: its result appears in the store (a new generation), or the lock is let go
 * (the record as it is: the caller takes the lock in turn). Null when the session ended meanwhile; when nothing came
 * before the deadline, STORE_FAILED if a read of the store failed meanwhile (a failover: the lock's holder writes its
 * record back once Redis answers), else undefined.
 */
async function waitForOther(sid: string, generation: number, deadline: number): Promise<TokenRecord | null | typeof STORE_FAILED | undefined> {
  const store = await useTokenStore()
  let storeFailed = false
  while (Date.now() < deadline) {
    await new Promise(resolve => setTimeout(resolve, WAIT_STEP_MS))
    let latest: TokenRecord | undefined
    try {
      latest = await store.get(sid)
    }
    catch {
      storeFailed = true
      continue // Redis did not answer this time: ask again
    }
    if (!latest) return null
    if (latest.generation > generation) {
      remember(latest)
      return latest
    }
    // Let go without a new record (a failover's write-back that had nothing to write, a lock taken in a failover and
    // released after it): the lock is ours to take rather than waited for until the deadline. On a Cluster the lock is
    // a key of another slot: its primary not answering is the store failing too, not the provider.
    let locked = true
    try {
      locked = await store.locked(sid)
    }
    catch {
      storeFailed = true
    }
    if (!locked) return latest
  }
  return storeFailed ? STORE_FAILED : undefined
}

/** The audience's `resource` and `scope` as token request parameters. */
function audienceParameters(audience: RouteAudience | undefined): Record<string, string> {
  const parameters: Record<string, string> = {}
  if (audience?.resource) parameters.resource = audience.resource
  if (audience?.scope) parameters.scope = audience.scope
  return parameters
}

/** One refresh token grant (with the audience's `resource` and `scope`), its result written back under the lock. */
async function refresh(session: SessionPayload, record: TokenRecord, audience: RouteAudience | undefined, span?: Span): Promise<string | undefined> {
  const now = Date.now()
  const parameters = audienceParameters(audience)
  let tokens: Awaited<ReturnType<typeof client.refreshTokenGrant>>
  try {
    tokens = await client.refreshTokenGrant(refreshingClient(), record.refreshToken!, parameters)
  }
  catch (error) {
    // Only the grant's refusal ends the session: a client error (invalid_client, a secret rotated too early), an
    // audience the provider does not serve, or a provider that does not answer must not log everyone out.
    const refusal = error instanceof client.ResponseBodyError ? error.error : undefined
    if (refusal === 'invalid_grant') {
      span?.setAttribute(OUTCOME_ATTRIBUTE, 'refused')
      // The provider ended the grant: so does the gateway, on every instance.
      await endOidcSession(record, 'refresh refused')
      return undefined
    }
    span?.setAttribute(OUTCOME_ATTRIBUTE, 'failed')
    useLogger().warn({ error: (error as Error).message, ...(audience ? { resource: audience.resource, scope: audience.scope } : {}) }, 'không làm mới được access token tại OpenID Provider.')
    hintOnClientRefusal(error, tokenAuthMethod(), useGatewayConfig().config.oidc!.clientId)
    return aliveOr(tokenFor(record, audience?.key), new GatewayError(502, audience && refusal ? MESSAGES.audienceTokenRefused : MESSAGES.iamUnreachable))
  }
  span?.setAttribute(OUTCOME_ATTRIBUTE, 'renewed')
  return keep(session, record, audience, tokens, now)
}

/**
 * An audience's token by token exchange (RFC 8693): the session's main access token (renewed first when due, under the
 * same lock) for one of the audience. The provider's refusal (any error answer, `invalid_grant` included: it is the
 * subject token's, not the grant's) is 502 for the route, the session kept.
 */
async function exchange(session: SessionPayload, record: TokenRecord, audience: RouteAudience, span: Span | undefined): Promise<string | undefined> {
  let latest = record
  if (!fresh(latest) && latest.refreshToken) {
    if (await refresh(session, latest, undefined) === undefined) return undefined
    latest = cachedTokens(session.sid) ?? latest
  }
  if (!alive(latest)) return undefined
  const now = Date.now()
  let tokens: Awaited<ReturnType<typeof client.genericGrantRequest>>
  try {
    tokens = await client.genericGrantRequest(refreshingClient(), TOKEN_EXCHANGE, { subject_token: latest.accessToken, subject_token_type: ACCESS_TOKEN_TYPE, ...audienceParameters(audience) })
  }
  catch (error) {
    span?.setAttribute(OUTCOME_ATTRIBUTE, 'failed')
    useLogger().warn({ error: (error as Error).message, resource: audience.resource, scope: audience.scope }, 'OpenID Provider không đổi được token cho audience (token exchange).')
    const refused = error instanceof client.ResponseBodyError
    return aliveOr(tokenFor(latest, audience.key), new GatewayError(502, refused ? MESSAGES.audienceTokenRefused : MESSAGES.iamUnreachable))
  }
  span?.setAttribute(OUTCOME_ATTRIBUTE, 'renewed')
  return keep(session, latest, audience, tokens, now)
}

/** Writes a token answer back into the session's record (under the lock), the others' tokens kept; its access token. */
async function keep(session: SessionPayload, record: TokenRecord, audience: RouteAudience | undefined, tokens: client.TokenEndpointResponse, now: number): Promise<string> {
  const token: KeptToken = { accessToken: tokens.access_token, expiresAt: expiryOf(tokens, now, sessionEndsAt(session)), obtainedAt: now }
  const next: TokenRecord = {
    ...record,
    ...(audience ? { audiences: { ...record.audiences, [audience.key]: token } } : token),
    // A rotating provider sent a new refresh token: the session's from now on, for every token of the session.
    refreshToken: tokens.refresh_token ?? record.refreshToken,
    idToken: tokens.id_token ?? record.idToken,
    generation: record.generation + 1,
  }
  await (await useTokenStore()).put(next, sessionEndsAt(session), true).catch((error: Error) => {
    useLogger().error({ error: error.message }, 'không lưu được token OIDC mới vào Redis: ghi lại khi Redis trả lời (các instance khác chờ đến lúc đó).')
  })
  remember(next)
  return token.accessToken
}

/** Ends an OpenID session everywhere: revoked (every instance), its tokens dropped. */
export async function endOidcSession(record: TokenRecord, reason: string): Promise<void> {
  forgetTokens(record.sid)
  await revokeSession({ sid: record.sid, iat: record.iat, user: { id: record.userId } })
  auditLine('logout.provider', { userId: record.userId, reason })
  await (await useTokenStore()).delete(record).catch(() => undefined)
}
