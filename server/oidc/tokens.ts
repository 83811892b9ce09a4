import type { RouteAudience } from '../core/config/types'
import type { AuthLevel } from '../core/session/auth-level'
import type { SessionPayload } from '../core/session/seal'
import { renewToken } from './renewal'
import { cachedTokens, fresh, tokenFor } from './token-cache'

/**
 * The access tokens of an OpenID session: its main one, and one per audience of the routes file's routes (`resource`
 * / `scope`), each renewed with the session's refresh token before it expires (renewal.ts).
 * - Steady state: a map lookup in this process (no Redis, no provider call), the same for an audience's token.
 * - Near the expiry, or on an audience's first use: one refresh per token at a time in this process (one promise
 *   shared by every request that needs it), and one per session across instances (renewal.ts).
 */

/** Refreshes under way in this process, by session id (the main token) or session id and audience key. */
const flights = new Map<string, Promise<string | undefined>>()

/** The login level (`acr`, `auth_time`) of an OpenID session whose tokens this process has read; undefined otherwise. */
export function oidcSessionLevel(session: SessionPayload): AuthLevel | undefined {
  const record = cachedTokens(session.sid)
  return record && { acr: record.acr, authTime: record.authTime }
}

/**
 * The access token to send for an OpenID session, its main one or, for a route with an audience, that audience's: at
 * once (a string) in the steady state, else a promise (first use in this process, or a renewal). Undefined when the
 * session has no tokens any more (ended, or lost with a memory store's process); a promise that fails with a
 * GatewayError when none can be had now (502, 503).
 */
export function oidcAccessToken(session: SessionPayload, audience?: RouteAudience): string | undefined | Promise<string | undefined> {
  const record = cachedTokens(session.sid)
  const token = record && tokenFor(record, audience?.key)
  if (token && fresh(token)) return token.accessToken
  const flightKey = audience ? `${session.sid} ${audience.key}` : session.sid
  let flight = flights.get(flightKey)
  if (!flight) {
    flight = renewToken(session, audience).finally(() => flights.delete(flightKey))
    flights.set(flightKey, flight)
  }
  return flight
}
