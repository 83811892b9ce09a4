import { describe, expect, it } from 'vitest'
import { toIdleTimeoutMs } from '../../server/core/config/config'
import { idleEndsAt, idleHintCookie, isIdle, lastSeen, resealDue } from '../../server/core/session/idle'
import { deriveSealKeys, sealSession, unsealSession, type SessionPayload } from '../../server/core/session/seal'
import { SessionCache } from '../../server/core/session/session-cache'

const keys = deriveSealKeys(['a'.repeat(32)], 'session')
const user = { id: 'u1', name: 'A', email: 'a@x.vn', roles: [], permissions: [] }
const now = Date.now()
const payload: SessionPayload = { user, iat: now - 60_000, sid: 'AAAAAAAAAAAAAAAA', seen: now - 1_000 }
const MINUTES_10 = 600_000

describe('APP_SESSION_IDLE_TIMEOUT', () => {
  it('is minutes, off (0) by default, decimals allowed, at most the session\'s 480', () => {
    expect(toIdleTimeoutMs(undefined)).toBe(0)
    expect(toIdleTimeoutMs('')).toBe(0)
    expect(toIdleTimeoutMs('0')).toBe(0)
    expect(toIdleTimeoutMs(30)).toBe(30 * 60_000)
    expect(toIdleTimeoutMs(' 15 ')).toBe(15 * 60_000)
    expect(toIdleTimeoutMs(0.5)).toBe(30_000)
    expect(toIdleTimeoutMs('480')).toBe(8 * 60 * 60_000)
  })
  it('refuses anything else, naming the variable and what it takes', () => {
    for (const value of ['-1', '481', 'abc', '30m', 'Infinity', true]) {
      expect(() => toIdleTimeoutMs(value)).toThrow(`APP_SESSION_IDLE_TIMEOUT phải là số phút từ 0 (tắt) đến 480 (8 giờ của phiên), vd. 30 hoặc 0.5 (nhận được '${String(value)}').`)
    }
  })
})

describe('the idle rules', () => {
  it('count from the last-seen time, or from the issue time of a cookie sealed without one', () => {
    expect(lastSeen(payload)).toBe(now - 1_000)
    expect(lastSeen({ iat: 5 })).toBe(5)
    expect(idleEndsAt(payload, MINUTES_10)).toBe(now - 1_000 + MINUTES_10)
    expect(idleEndsAt(payload, 0)).toBeNull()
  })
  it('end a session at its whole window, never with the timeout off', () => {
    const seen = now - MINUTES_10
    expect(isIdle({ iat: seen, seen }, MINUTES_10, now - 1)).toBe(false)
    expect(isIdle({ iat: seen, seen }, MINUTES_10, now)).toBe(true)
    expect(isIdle({ iat: 0, seen: 0 }, 0, now)).toBe(false)
  })
  it('re-seal once a quarter of the window has passed, never with the timeout off', () => {
    const seen = now - MINUTES_10 / 4
    expect(resealDue({ iat: seen, seen }, MINUTES_10, now - 1)).toBe(false)
    expect(resealDue({ iat: seen, seen }, MINUTES_10, now)).toBe(true)
    expect(resealDue({ iat: 0 }, 0, now)).toBe(false)
  })
  it('give the tabs a cookie their script can read, holding a time and nothing else', () => {
    expect(idleHintCookie(1_764_190_000_000, 60, true)).toMatch(/^svc_idle=1764190000000; Max-Age=60; Expires=[^;]+; Path=\/; SameSite=Lax; Secure$/)
    expect(idleHintCookie(null, 60, false)).toBe('svc_idle=; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/; SameSite=Lax')
  })
})

describe('the last-seen time in the sealed cookie', () => {
  it('opens when it lies between the issue time and now; a cookie without one still opens', () => {
    expect(unsealSession(sealSession(payload, keys), keys, now)).toEqual(payload)
    const { seen: _, ...without } = payload
    expect(unsealSession(sealSession(without, keys), keys, now)).toEqual(without)
  })
  it('is no session when it is not a time, earlier than the issue, or in the future', () => {
    for (const seen of ['1', payload.iat - 1, now + 120_000] as unknown[]) {
      expect(unsealSession(sealSession({ ...payload, seen } as SessionPayload, keys), keys, now)).toBeNull()
    }
  })
  it('keeps the sealed text as long when it moves (13 digits, as the issue time)', () => {
    expect(sealSession({ ...payload, seen: now }, keys).length).toBe(sealSession({ ...payload, seen: now - 7 * 3_600_000 }, keys).length)
  })
})

describe('SessionCache re-seal claims', () => {
  it('gives one claim a value within the window, the next after it; a value it does not hold is always claimable', () => {
    const cache = new SessionCache(keys)
    const value = sealSession(payload, keys)
    expect(cache.claimReseal(value, now, 1_000)).toBe(true)
    cache.open(value, now)
    expect(cache.claimReseal(value, now, 1_000)).toBe(true)
    expect(cache.claimReseal(value, now + 999, 1_000)).toBe(false)
    expect(cache.claimReseal(value, now + 1_000, 1_000)).toBe(true)
  })
  it('tells of each value it opens with AES-GCM, not of its hits', () => {
    const cache = new SessionCache(keys)
    const opened: string[] = []
    cache.onOpened = session => opened.push(session.sid)
    const value = sealSession(payload, keys)
    cache.open(value, now)
    cache.open(value, now)
    expect(opened).toEqual([payload.sid])
  })
})
