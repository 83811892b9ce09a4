import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose'
import { RequestError, MESSAGES } from '../http/errors'
import { auditLine } from '../ops/audit'
import { oidcSettings, useOidcClient } from './provider'
import { useTokenStore } from './token-store'
import { endOidcSession } from './renewal'

/**
 * POST /auth/backchannel-logout (OpenID Connect Back-Channel Logout 1.0): the provider's logout token, verified by
 * jose against the provider's JWKS (signature, an asymmetric algorithm, `iss`, `aud` = our client id, `iat` within the
 * last 5 minutes with 30 s of skew), then the spec's claims: the back-channel `events` member, `sid` or `sub`, no
 * `nonce`, a `jti` never seen before (kept in the token store, shared by every instance). The matching sessions end on
 * every instance (the revocations), their tokens dropped.
 */

const EVENT = 'http://schemas.openid.net/event/backchannel-logout'
const MAX_AGE_SECONDS = 300
const CLOCK_TOLERANCE_SECONDS = 30
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']

let jwks: ReturnType<typeof createRemoteJWKSet> | undefined

/** The provider's keys (jose caches them and fetches again for a key id it does not hold). */
function providerKeys(): ReturnType<typeof createRemoteJWKSet> {
  if (!jwks) {
    const uri = useOidcClient().serverMetadata().jwks_uri
    if (!uri) throw new RequestError(400, MESSAGES.logoutTokenInvalid)
    jwks = createRemoteJWKSet(new URL(uri))
  }
  return jwks
}

/** The claims of a valid logout token; RequestError 400 for anything else (the spec's answer). */
export async function verifyLogoutToken(token: string): Promise<JWTPayload & { sid?: string, sub?: string }> {
  let payload: JWTPayload
  try {
    ({ payload } = await jwtVerify(token, providerKeys(), {
      issuer: useOidcClient().serverMetadata().issuer,
      audience: oidcSettings().clientId,
      algorithms: ALGORITHMS,
      maxTokenAge: MAX_AGE_SECONDS,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      requiredClaims: ['iat', 'jti', 'events'],
    }))
  }
  catch {
    throw new RequestError(400, MESSAGES.logoutTokenInvalid)
  }
  const events = payload.events as Record<string, unknown> | undefined
  const event = events && typeof events === 'object' ? events[EVENT] : undefined
  const valid = event !== null && typeof event === 'object' && !Array.isArray(event)
    && payload.nonce === undefined
    && (typeof payload.sid === 'string' || typeof payload.sub === 'string')
    && typeof payload.jti === 'string'
  if (!valid) throw new RequestError(400, MESSAGES.logoutTokenInvalid)
  return payload as JWTPayload & { sid?: string, sub?: string }
}

/** Ends the sessions a verified logout token names: of its provider session (`sid`), else of its subject. */
export async function backchannelLogout(token: string): Promise<number> {
  const claims = await verifyLogoutToken(token)
  const store = await useTokenStore()
  let first: boolean
  try {
    first = await store.firstUse(claims.jti!, (claims.iat! + MAX_AGE_SECONDS + CLOCK_TOLERANCE_SECONDS) * 1000)
  }
  catch (error) {
    // No answer in time: Redis may still take the jti, late. It is given back (sent after it on the same connection),
    // so that the provider's retry is not taken for a replay.
    await store.forgetUse(claims.jti!).catch(() => undefined)
    throw error
  }
  // A replayed token changes nothing, but says so.
  if (!first) throw new RequestError(400, MESSAGES.logoutTokenInvalid)
  let ended = 0
  try {
    const sids = claims.sid ? await store.sessionsOf({ providerSid: claims.sid }) : await store.sessionsOf({ sub: claims.sub! })
    for (const sid of sids) {
      const record = await store.get(sid)
      if (!record || (claims.sub && record.sub !== claims.sub)) continue
      await endOidcSession(record, 'back-channel logout')
      ended++
    }
  }
  catch (error) {
    // Not carried out (Redis did not answer): the provider may send the same token again.
    await store.forgetUse(claims.jti!).catch(() => undefined)
    throw error
  }
  auditLine('logout.backchannel', { sessions: ended, providerSid: claims.sid ?? null, subject: claims.sub ?? null })
  return ended
}
