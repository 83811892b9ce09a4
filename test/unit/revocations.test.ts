import { describe, expect, it } from 'vitest'
import { MAX_SESSIONS_PER_USER, parseAnnouncement, RevocationSet } from '../../server/core/session/revocations'
import { sessionEndsAt, sessionExpiresAt } from '../../server/core/session/seal'

const HOUR = 60 * 60_000

function clockedSet() {
  let time = 1_000_000_000
  const set = new RevocationSet(() => time)
  return { set, now: () => time, advance: (ms: number) => void (time += ms) }
}

const session = (sid: string, iat: number, userId = 'u-1') => ({ sid, iat, user: { id: userId } })

describe('RevocationSet', () => {
  it('revokes one session by its id, and no other', () => {
    const { set, now } = clockedSet()
    expect(set.add({ kind: 'session', sid: 'a', userId: 'u-1', iat: now() })).toBe(true)
    expect(set.isRevoked(session('a', now()))).toBe(true)
    expect(set.isRevoked(session('b', now()))).toBe(false)
    expect(set.add({ kind: 'session', sid: 'a', userId: 'u-1', iat: now() })).toBe(false)
  })

  it('revokes every session of a user issued up to the call, not those issued after', () => {
    const { set, now, advance } = clockedSet()
    const before = now()
    set.add({ kind: 'user', userId: 'u-1', before })
    expect(set.isRevoked(session('a', before - HOUR))).toBe(true)
    expect(set.isRevoked(session('b', before))).toBe(true)
    expect(set.isRevoked(session('c', before + 1))).toBe(false)
    expect(set.isRevoked(session('d', before - HOUR, 'u-2'))).toBe(false)
    advance(10)
    expect(set.add({ kind: 'user', userId: 'u-1', before: before - 5 })).toBe(false) // an older one adds nothing
  })

  it('lists what it holds that is still live, as it was added (to write it back to a Redis that lost it)', () => {
    const { set, now, advance } = clockedSet()
    const first = now()
    set.add({ kind: 'session', sid: 'a', userId: 'u-1', iat: first - 8 * HOUR + 10 })
    set.add({ kind: 'session', sid: 'b', userId: 'u-1', iat: first })
    set.add({ kind: 'user', userId: 'u-2', before: first })
    expect(set.live()).toEqual([
      { kind: 'session', sid: 'a', userId: 'u-1', iat: first - 8 * HOUR + 10 },
      { kind: 'session', sid: 'b', userId: 'u-1', iat: first },
      { kind: 'user', userId: 'u-2', before: first },
    ])
    advance(10)
    expect(set.live().map(revocation => revocation.kind === 'session' ? revocation.sid : revocation.userId)).toEqual(['b', 'u-2'])
  })

  it('forgets a revocation once its sessions have ended anyway (8 hours)', () => {
    const { set, now, advance } = clockedSet()
    set.add({ kind: 'session', sid: 'a', userId: 'u-1', iat: now() })
    set.add({ kind: 'user', userId: 'u-2', before: now() })
    advance(8 * HOUR - 1)
    set.prune(true)
    expect(set.size).toBe(2)
    advance(1)
    set.prune(true)
    expect(set.size).toBe(0)
    expect(set.add({ kind: 'session', sid: 'old', userId: 'u-1', iat: now() - 8 * HOUR })).toBe(false)
  })

  it('stays bounded when one user logs in and out without end: older sessions are revoked as a whole', () => {
    const { set, now, advance } = clockedSet()
    for (let i = 0; i < 10 * MAX_SESSIONS_PER_USER; i++) {
      advance(1)
      set.add({ kind: 'session', sid: `s-${i}`, userId: 'u-1', iat: now() })
    }
    expect(set.size).toBeLessThanOrEqual(MAX_SESSIONS_PER_USER + 1)
    for (let i = 0; i < 10 * MAX_SESSIONS_PER_USER; i++) expect(set.isRevoked(session(`s-${i}`, now() - 10 * MAX_SESSIONS_PER_USER + i + 1))).toBe(true)
    // A session issued afterwards still works.
    advance(1)
    expect(set.isRevoked(session('fresh', now()))).toBe(false)
  })
})

describe('announcements on the revocations channel', () => {
  it('carry one revocation (an object) or a batch (an array); what is not one of ours is skipped', () => {
    const one = { kind: 'session', sid: 's-1', userId: 'u-1', iat: 1 }
    const user = { kind: 'user', userId: 'u-2', before: 2 }
    expect(parseAnnouncement(JSON.stringify(one))).toEqual([one])
    expect(parseAnnouncement(JSON.stringify([one, { kind: 'session', sid: 3 }, user, null, 'x']))).toEqual([one, user])
    expect(parseAnnouncement('[{"kind":"user"')).toEqual([])
    expect(parseAnnouncement('"text"')).toEqual([])
  })
})

describe('session end', () => {
  it('is 8 hours after issue, or the token\'s expiry when that comes first', () => {
    expect(sessionEndsAt({ iat: 1_000 })).toBe(1_000 + 8 * HOUR)
    expect(sessionExpiresAt({ iat: 1_000 })).toBe(1_000 + 8 * HOUR)
    expect(sessionExpiresAt({ iat: 1_000, expiresAt: 3_000 })).toBe(3_000)
    expect(sessionExpiresAt({ iat: 1_000, expiresAt: 9 * HOUR })).toBe(1_000 + 8 * HOUR)
  })
})
