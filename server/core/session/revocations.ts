/**
 * The set of revoked sessions, kept in memory so that checking a request costs a map lookup and no round trip. Pure.
 * A revocation lives only until the sessions it covers would have ended anyway (8 hours), so memory stays bounded.
 */
import { SESSION_TTL_MS } from './seal'

/** What a revocation check needs of a session. */
export interface RevocableSession {
  sid: string
  iat: number
  user: { id: string }
}

/** One revocation, as instances share them. */
export type Revocation
  = | { kind: 'session', sid: string, userId: string, iat: number }
    | { kind: 'user', userId: string, before: number }

/** Past this many revoked sessions of one user in 8 hours, they become one revocation of the user's older sessions. */
export const MAX_SESSIONS_PER_USER = 100
const PRUNE_EVERY_MS = 60_000

interface RevokedSession {
  userId: string
  /** When the session ends anyway (iat + 8 h): the revocation is dropped then. */
  until: number
}

export class RevocationSet {
  private readonly sessions = new Map<string, RevokedSession>()
  private readonly sessionsOfUser = new Map<string, Set<string>>()
  /** userId -> every session of this user issued at or before this time is revoked. */
  private readonly users = new Map<string, number>()
  private lastPrune = 0

  constructor(private readonly now: () => number = Date.now) {}

  /** How many revocations are held. */
  get size(): number {
    return this.sessions.size + this.users.size
  }

  /** Whether a session is revoked (its id, or its user's sessions issued up to a time). */
  isRevoked(session: RevocableSession): boolean {
    if (this.sessions.size && this.sessions.has(session.sid)) return true
    if (!this.users.size) return false
    const before = this.users.get(session.user.id)
    return before !== undefined && session.iat <= before
  }

  /** Adds a revocation; false when it was already held (or is covered, or already over). */
  add(revocation: Revocation): boolean {
    const time = this.now()
    this.pruneNow(time)
    if (revocation.kind === 'user') return this.addUser(revocation.userId, revocation.before, time)
    const { sid, userId, iat } = revocation
    const until = iat + SESSION_TTL_MS
    if (until <= time || this.sessions.has(sid) || this.isRevoked({ sid, iat, user: { id: userId } })) return false
    let ofUser = this.sessionsOfUser.get(userId)
    if (!ofUser) this.sessionsOfUser.set(userId, ofUser = new Set())
    // One user logging in and out without end would grow the set: their older sessions are then revoked as a whole.
    if (ofUser.size >= MAX_SESSIONS_PER_USER) return this.addUser(userId, Math.max(iat, ...this.issueTimes(ofUser)), time)
    this.sessions.set(sid, { userId, until })
    ofUser.add(sid)
    return true
  }

  private issueTimes(sids: Set<string>): number[] {
    return [...sids].map(sid => this.sessions.get(sid)!.until - SESSION_TTL_MS)
  }

  private addUser(userId: string, before: number, time: number): boolean {
    if (before + SESSION_TTL_MS <= time || (this.users.get(userId) ?? -Infinity) >= before) return false
    this.users.set(userId, before)
    // Session revocations this one covers are no longer needed.
    for (const sid of this.sessionsOfUser.get(userId) ?? []) {
      if (this.sessions.get(sid)!.until - SESSION_TTL_MS <= before) {
        this.sessions.delete(sid)
        this.sessionsOfUser.get(userId)!.delete(sid)
      }
    }
    return true
  }

  /** Every revocation held whose sessions could still be alive (to write them back to a Redis that lost them). */
  live(): Revocation[] {
    const time = this.now()
    const live: Revocation[] = []
    for (const [sid, { userId, until }] of this.sessions) {
      if (until > time) live.push({ kind: 'session', sid, userId, iat: until - SESSION_TTL_MS })
    }
    for (const [userId, before] of this.users) {
      if (before + SESSION_TTL_MS > time) live.push({ kind: 'user', userId, before })
    }
    return live
  }

  /** Drops revocations whose sessions have ended anyway (at most once a minute unless forced). */
  prune(force = false): void {
    const time = this.now()
    if (force) this.lastPrune = 0
    this.pruneNow(time)
  }

  private pruneNow(time: number): void {
    if (time - this.lastPrune < PRUNE_EVERY_MS) return
    this.lastPrune = time
    for (const [sid, entry] of this.sessions) {
      if (entry.until > time) continue
      this.sessions.delete(sid)
      const ofUser = this.sessionsOfUser.get(entry.userId)
      ofUser?.delete(sid)
      if (ofUser?.size === 0) this.sessionsOfUser.delete(entry.userId)
    }
    for (const [userId, before] of this.users) {
      if (before + SESSION_TTL_MS <= time) this.users.delete(userId)
    }
  }
}

/** A parsed value that is a revocation, or undefined. */
function asRevocation(value: unknown): Revocation | undefined {
  const revocation = value as Revocation | null
  if (revocation?.kind === 'session' && typeof revocation.sid === 'string' && typeof revocation.userId === 'string' && typeof revocation.iat === 'number') return revocation
  if (revocation?.kind === 'user' && typeof revocation.userId === 'string' && typeof revocation.before === 'number') return revocation
  return undefined
}

/** A revocation as another instance (or a journal) wrote it, or undefined when the text is not one of ours. */
export function parseRevocation(text: string): Revocation | undefined {
  try {
    return asRevocation(JSON.parse(text))
  }
  catch {
    return undefined // not one of ours
  }
}

/**
 * The revocations an announcement on the channel carries: one (a revocation's JSON object, as every version sends a
 * new one), or many (a JSON array: a write-back, announced a batch a message); what is not one of ours is skipped.
 */
export function parseAnnouncement(text: string): Revocation[] {
  let value: unknown
  try {
    value = JSON.parse(text)
  }
  catch {
    return []
  }
  return (Array.isArray(value) ? value : [value]).map(asRevocation).filter(revocation => revocation !== undefined)
}

/** Revocations as journal text: one JSON object a line. */
export function journalText(revocations: readonly Revocation[]): string {
  return revocations.map(revocation => `${JSON.stringify(revocation)}\n`).join('')
}

/** The revocations of a journal's text; lines that are not one (a line cut by a crash) are skipped. */
export function parseJournal(text: string): Revocation[] {
  return text.split('\n').map(line => line.trim()).filter(Boolean).map(parseRevocation).filter(revocation => revocation !== undefined)
}
