import { deriveSealKeys, sealValue, unsealValue } from '../../server/core/session/seal'
import { TEST_SECRET } from './gateway'

/**
 * Sealed values as a gateway of the tests seals them (APP_SESSION_SECRET = TEST_SECRET): the place in the tests that
 * seals as the gateway does, so that a change of the sealing is made here. A test uses it to reach a state no browser
 * can wait for, e.g. an OpenID trip older than its 10 minutes.
 */

/** The OpenID login's trip cookie (`__Host-svc_oidc`): its own sealed kind (server/core/session/seal.ts `oidc-trip`). */
const tripKeys = () => deriveSealKeys([TEST_SECRET], 'oidc-trip')

/** One trip in the `__Host-svc_oidc` cookie (server/oidc/login.ts `Flow`); only what the tests change is typed. */
export interface SealedTrip {
  state: string
  iat: number
  [field: string]: unknown
}

/** The trips a `__Host-svc_oidc` value holds, newest first; throws when the value does not open (wrong key). */
export function openTrips(value: string): SealedTrip[] {
  const trips = unsealValue(value, tripKeys(), 8192)
  if (!Array.isArray(trips)) throw new Error('the trip cookie does not open with the test secret: test/support/sealed.ts must follow server/core/session/seal.ts')
  return trips as SealedTrip[]
}

/** A `__Host-svc_oidc` value holding these trips, sealed as the gateway seals it. */
export function sealTrips(trips: SealedTrip[]): string {
  return sealValue(trips, tripKeys())
}

/** The same trips, each started `ms` earlier than it was (its `iat` moved back). */
export function agedTrips(value: string, ms: number): string {
  return sealTrips(openTrips(value).map(trip => ({ ...trip, iat: trip.iat - ms })))
}

/** The sealed kind of a gateway's svc_session: the contract IAM's, mock mode's, OpenID Connect's. */
export type SessionKind = 'session' | 'session-mock' | 'session-oidc'

/** The fields of a session cookie's payload the tests read and move (server/core/session/seal.ts `SessionPayload`). */
export interface SealedSession {
  sid: string
  iat: number
  seen?: number
  [field: string]: unknown
}

/** The session a `svc_session` value (or `svc_session=…` pair) holds; throws when it does not open. `kind`: the gateway's mode. */
export function openSessionCookie(value: string, kind: SessionKind = 'session'): SealedSession {
  const session = unsealValue(value.replace(/^svc_session=/, ''), deriveSealKeys([TEST_SECRET], kind), 8192)
  if (!session || typeof session !== 'object') throw new Error('the session cookie does not open with the test secret: test/support/sealed.ts must follow server/core/session/seal.ts')
  return session as SealedSession
}

/**
 * The same session as a `svc_session=…` pair, its times moved back: last seen `seenAgo` ms ago, issued `iatAgo` ms
 * ago (default: as it was, or as long ago as it was last seen when that is earlier): a session left idle, or near its
 * 8-hour end, without waiting for it.
 */
export function agedSessionCookie(value: string, ages: { seenAgo: number, iatAgo?: number }, kind: SessionKind = 'session'): string {
  const session = openSessionCookie(value, kind)
  const now = Date.now()
  const seen = now - ages.seenAgo
  const iat = ages.iatAgo === undefined ? Math.min(session.iat, seen) : now - ages.iatAgo
  return `svc_session=${sealValue({ ...session, iat, seen: Math.max(seen, iat) }, deriveSealKeys([TEST_SECRET], kind))}`
}

/** The same session as a `svc_session=…` pair with fields replaced (another `sid`, another user): a session no login made. */
export function resealedSessionCookie(value: string, fields: Partial<SealedSession>, kind: SessionKind = 'session'): string {
  return `svc_session=${sealValue({ ...openSessionCookie(value, kind), ...fields }, deriveSealKeys([TEST_SECRET], kind))}`
}
