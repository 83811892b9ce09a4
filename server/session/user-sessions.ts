/**
 * A user's own sessions (issue 41): the per-user index written at login and read by GET /auth/sessions, the ending
 * of one of them or of all others (the existing revocation: every instance within a second), the cap per user
 * (APP_SESSION_MAX_PER_USER), and the server utils listUserSessions and endSession. The entries live in
 * session-index-store.ts (Redis or memory); this file decides which are live: an entry past its 8-hour end, idle past
 * APP_SESSION_IDLE_TIMEOUT or revoked is no session, whatever the index still holds. No call here runs per proxied
 * request: the idle timeout's re-seal (a quarter of its window at most) moves a last-seen time, nothing else.
 */
import type { H3Event } from 'h3'
import type { UserSession } from '../../shared/types'
import { deviceLabel } from '../core/session/device-label'
import type { SessionPayload } from '../core/session/seal'
import { entryState, MAX_INDEXED_PER_USER, overCap, parsePublicSessionId, publicSessionId, type IndexedSession } from '../core/session/session-index'
import { audit } from '../http/audit'
import { GatewayError, MESSAGES } from '../http/errors'
import { clientAddress } from '../http/scope'
import { auditLine } from '../ops/audit'
import { useGatewayConfig } from '../ops/config'
import { throttledWarning } from '../ops/throttled-warning'
import { isSessionRevoked, revokeSession } from './revocations'
import { useSessionIndex } from './session-index-store'

/** What ending a session also drops, by its kind of IAM (OpenID Connect: its kept tokens, registered at start). */
export type SessionEndHook = (session: { sid: string, iat: number, userId: string }) => Promise<void>
let endHook: SessionEndHook | undefined

/** Says what else goes when a session is ended here (oidc/logout.ts's dropSessionTokens, by the start plugin). */
export function onSessionEnd(hook: SessionEndHook): void {
  endHook = hook
}

const warn = throttledWarning()
const failed = (what: string) => (error: unknown) => warn(`${what} (${error instanceof Error ? error.message : String(error)}).`)

/** The index's verdict on one entry of a user. */
function stateOf(userId: string, entry: IndexedSession, now: number) {
  return entryState(entry, now, useGatewayConfig().config.sessionIdleMs, isSessionRevoked({ sid: entry.sid, iat: entry.iat, user: { id: userId } }))
}

/** Revokes one indexed session, drops what its kind keeps beside it and its entry, and writes its audit line. */
async function endEntry(userId: string, entry: IndexedSession, reason: 'user' | 'others' | 'cap' | 'server', event?: H3Event): Promise<void> {
  await revokeSession({ sid: entry.sid, iat: entry.iat, user: { id: userId } })
  const fields = { userId, reason, device: entry.device, createdAt: entry.iat }
  if (event) audit(event, 'session.end', fields)
  else auditLine('session.end', fields)
  await endHook?.({ sid: entry.sid, iat: entry.iat, userId }).catch(failed('không xoá được token của phiên đã kết thúc'))
  await (await useSessionIndex()).remove(userId, [entry.sid]).catch(failed('không xoá được phiên khỏi danh sách'))
}

/**
 * Writes a new session into its user's index (at login: address and device from the request) and, with
 * APP_SESSION_MAX_PER_USER, ends the oldest sessions past the cap. A store that does not answer never blocks the
 * login: said in the log (the cap then waits for the next login).
 */
export async function recordSession(event: H3Event, session: SessionPayload): Promise<void> {
  const userId = session.user.id
  const entry: IndexedSession = {
    sid: session.sid,
    iat: session.iat,
    seen: session.seen ?? session.iat,
    address: clientAddress(event),
    device: deviceLabel(event.node.req.headers['user-agent']),
  }
  const index = await useSessionIndex()
  let entries: IndexedSession[]
  try {
    entries = await index.add(userId, entry)
  }
  catch (error) {
    return failed('không ghi được phiên mới vào danh sách phiên (giới hạn APP_SESSION_MAX_PER_USER không áp dụng lần này)')(error)
  }
  const now = Date.now()
  const dead = entries.filter(indexed => stateOf(userId, indexed, now) === 'ended')
  const live = entries.filter(indexed => stateOf(userId, indexed, now) === 'live')
  for (const old of overCap(live, useGatewayConfig().config.sessionMaxPerUser, session.sid)) await endEntry(userId, old, 'cap', event)
  const unlisted = overCap(live, MAX_INDEXED_PER_USER, session.sid)
  if (dead.length || unlisted.length) await index.remove(userId, [...dead, ...unlisted].map(indexed => indexed.sid)).catch(failed('không dọn được danh sách phiên'))
}

/** The live entries of a user (the ended ones are dropped from the index on the way); 503 when the store does not answer. */
async function liveEntries(userId: string): Promise<IndexedSession[]> {
  const index = await useSessionIndex()
  const now = Date.now()
  const entries = await index.list(userId).catch((error: unknown) => {
    failed('không đọc được danh sách phiên')(error)
    throw new GatewayError(503, MESSAGES.sessionsUnavailable)
  })
  const ended = entries.filter(entry => stateOf(userId, entry, now) === 'ended').map(entry => entry.sid)
  if (ended.length) void index.remove(userId, ended).catch(failed('không dọn được danh sách phiên'))
  return entries.filter(entry => stateOf(userId, entry, now) === 'live')
}

function viewOf(userId: string, entry: IndexedSession, currentSid?: string): UserSession {
  return { id: publicSessionId(userId, entry.sid), createdAt: entry.iat, lastSeenAt: entry.seen, address: entry.address, device: entry.device, current: entry.sid === currentSid }
}

/** The live sessions of a user, most recently used first: for the app's own server code (an admin tool). */
export async function listUserSessions(userId: string): Promise<UserSession[]> {
  return (await liveEntries(userId)).sort((a, b) => b.seen - a.seen).map(entry => viewOf(userId, entry))
}

/**
 * The sessions of the request's own user, the current one first and marked. A current session the index does not
 * hold (made before the index, or lost with Redis's data) is written in now, with this request's address and device.
 */
export async function listOwnSessions(event: H3Event, current: SessionPayload): Promise<UserSession[]> {
  const userId = current.user.id
  const entries = await liveEntries(userId)
  let own = entries.find(entry => entry.sid === current.sid)
  if (!own) {
    own = { sid: current.sid, iat: current.iat, seen: current.seen ?? current.iat, address: clientAddress(event), device: deviceLabel(event.node.req.headers['user-agent']) }
    await (await useSessionIndex()).add(userId, own).catch(failed('không ghi được phiên hiện tại vào danh sách phiên'))
    entries.push(own)
  }
  // The cookie's own last-seen time is the freshest there is of the current session.
  if (current.seen !== undefined && current.seen > own.seen) own.seen = current.seen
  return entries.sort((a, b) => Number(b === own) - Number(a === own) || b.seen - a.seen).map(entry => viewOf(userId, entry, current.sid))
}

/** Ends the live session a public id names, when it is of `userId` (any user's, without one); whether one was ended. */
async function endById(id: unknown, userId: string | undefined, reason: 'user' | 'server', event?: H3Event): Promise<{ sid: string } | undefined> {
  const named = parsePublicSessionId(id)
  if (!named || (userId !== undefined && named.userId !== userId)) return undefined
  const entry = (await liveEntries(named.userId)).find(live => live.sid === named.sid)
  if (!entry) return undefined
  await endEntry(named.userId, entry, reason, event)
  return { sid: entry.sid }
}

/**
 * Ends one session of the request's own user (POST /auth/sessions/end): its sid, or undefined when the id names no
 * live session of this user (a made-up id, another user's, one already ended): nothing is ended then.
 */
export function endOwnSession(event: H3Event, current: SessionPayload, id: unknown): Promise<{ sid: string } | undefined> {
  return endById(id, current.user.id, 'user', event)
}

/** Ends every other live session of the request's own user (POST /auth/sessions/end-others); how many. */
export async function endOtherSessions(event: H3Event, current: SessionPayload): Promise<number> {
  const others = (await liveEntries(current.user.id)).filter(entry => entry.sid !== current.sid)
  for (const entry of others) await endEntry(current.user.id, entry, 'others', event)
  return others.length
}

/**
 * Ends the session an id of listUserSessions names, on every instance within a second (an admin tool); false when
 * it names no live session. Rejects (a GatewayError, 503) when the index's store does not answer.
 */
export async function endSession(id: string): Promise<boolean> {
  return (await endById(id, undefined, 'server')) !== undefined
}
