/**
 * The per-user index of live sessions (issue 41): what it keeps of each session, the Redis key of a user's entries,
 * the public id of a session, and which entries are still live sessions. Pure.
 */
import { createHash } from 'node:crypto'
import { SESSION_TTL_MS } from './seal'

/** What the index keeps of one session: none of it is a secret (no token, no cookie). */
export interface IndexedSession {
  /** The session's id (svc_session's `sid`): what a revocation takes, with `iat` and the user id. */
  sid: string
  /** Issue time (login), ms since the epoch. */
  iat: number
  /** Last seen in use (ms), coarse: moved at login and when the idle timeout re-seals the cookie. */
  seen: number
  /** The client's address at login, as the gateway believes it (APP_TRUST_PROXY). */
  address: string
  /** A short label of the browser and system (core/session/device-label.ts), '' when unknown. */
  device: string
}

/** Entries kept per user at most: the newest win. Beyond a cap per user (APP_SESSION_MAX_PER_USER) they never grow. */
export const MAX_INDEXED_PER_USER = 100

/** Longest user id written into a key as it is; a longer one is hashed (keys stay short). */
const MAX_KEY_USER = 128

/**
 * The Redis key of a user's entries. The `{u:…}` hash tag puts every key of one user in one Redis Cluster slot; the
 * user id is percent-encoded, so no `{`, `}` or ':' of an IAM's id changes the tag or meets another user's key.
 */
export function userIndexKey(userId: string): string {
  const encoded = encodeURIComponent(userId)
  const part = encoded.length <= MAX_KEY_USER ? encoded : `h~${createHash('sha256').update(userId).digest('base64url')}`
  return `svc:{u:${part}}:sessions`
}

/**
 * The id a session is shown and ended by: its `sid` and its user's id (base64url), so that a server util given only
 * the id finds the user's entries. It is checked against the index of that user: a made-up id ends nothing.
 */
export function publicSessionId(userId: string, sid: string): string {
  return `${sid}.${Buffer.from(userId, 'utf8').toString('base64url')}`
}

const SID = /^[\w-]{16,64}$/
const MAX_ID_LENGTH = 1024

/** The session and user a public id names, or undefined for anything malformed (never an error). */
export function parsePublicSessionId(id: unknown): { sid: string, userId: string } | undefined {
  if (typeof id !== 'string' || id.length > MAX_ID_LENGTH) return undefined
  const dot = id.indexOf('.')
  if (dot < 0) return undefined
  const sid = id.slice(0, dot)
  const encoded = id.slice(dot + 1)
  if (!SID.test(sid) || !encoded) return undefined
  const bytes = Buffer.from(encoded, 'base64url')
  // Node ignores stray bits of a last character: only the exact spelling names a user.
  if (bytes.toString('base64url') !== encoded) return undefined
  const userId = bytes.toString('utf8')
  return Buffer.from(userId, 'utf8').equals(bytes) ? { sid, userId } : undefined
}

/** An index entry read back (from Redis or memory), or undefined when it is not one. */
export function parseIndexedSession(text: string): IndexedSession | undefined {
  let value: Partial<IndexedSession>
  try {
    value = JSON.parse(text)
  }
  catch {
    return undefined
  }
  if (!value || typeof value !== 'object' || typeof value.sid !== 'string' || typeof value.iat !== 'number') return undefined
  return {
    sid: value.sid,
    iat: value.iat,
    seen: typeof value.seen === 'number' && value.seen >= value.iat ? value.seen : value.iat,
    address: typeof value.address === 'string' ? value.address : '',
    device: typeof value.device === 'string' ? value.device : '',
  }
}

/** Why an entry is no live session: past its 8-hour end, idle past the window (`idleMs` 0: never), or revoked. */
export function entryState(entry: IndexedSession, now: number, idleMs: number, revoked: boolean): 'live' | 'ended' | 'idle' {
  if (revoked || now - entry.iat >= SESSION_TTL_MS) return 'ended'
  return idleMs > 0 && now - entry.seen >= idleMs ? 'idle' : 'live'
}

/**
 * The sessions to end so that at most `max` remain (`max` 0: none), oldest login first; `keep` (the new session) is
 * never among them.
 */
export function overCap(live: readonly IndexedSession[], max: number, keep: string): IndexedSession[] {
  if (max <= 0 || live.length <= max) return []
  return live.filter(entry => entry.sid !== keep).sort((a, b) => a.iat - b.iat).slice(0, live.length - max)
}
