import { createDecipheriv } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { fitSessionToBudget } from '../../server/core/session/budget'
import { COOKIE_BUDGET_BYTES, serializeCookie, setCookieLineBytes } from '../../server/core/session/cookie'
import { deriveSealKeys, liveToken, sealSession, SESSION_TTL_MS, unsealSession, type SessionPayload } from '../../server/core/session/seal'
import { SessionCache } from '../../server/core/session/session-cache'

const SECRET = 'a'.repeat(32)
const OTHER = 'b'.repeat(32)
const keys = deriveSealKeys([SECRET], 'session')
const user = { id: 'u1', name: 'Nguyễn A', email: 'a@x.vn', roles: ['admin'], permissions: ['/orders/search'] }
const now = Date.now()
const payload: SessionPayload = { user, accessToken: 'token-123', expiresAt: now + 60_000, iat: now, sid: 'AAAAAAAAAAAAAAAA' }

function flip(text: string, at: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const char = text[at]!
  const replacement = alphabet[(alphabet.indexOf(char) + 1) % alphabet.length]!
  return text.slice(0, at) + replacement + text.slice(at + 1)
}

describe('sealSession / unsealSession', () => {
  it('round-trips in the v1.<iv>.<ciphertext>.<tag> format with a 12-byte IV and 16-byte tag', () => {
    const sealed = sealSession(payload, keys)
    const parts = sealed.split('.')
    expect(parts).toHaveLength(4)
    expect(parts[0]).toBe('v1')
    for (const part of parts.slice(1)) expect(part).toMatch(/^[\w-]+$/)
    expect(Buffer.from(parts[1]!, 'base64url')).toHaveLength(12)
    expect(Buffer.from(parts[3]!, 'base64url')).toHaveLength(16)
    expect(sealed).not.toContain('token-123')
    expect(unsealSession(sealed, keys, now)).toEqual(payload)
  })

  it('uses a fresh IV every time', () => {
    expect(sealSession(payload, keys)).not.toBe(sealSession(payload, keys))
  })

  it('refuses every tampering: each part, each character', () => {
    const sealed = sealSession(payload, keys)
    for (let at = 3; at < sealed.length; at++) {
      if (sealed[at] === '.') continue
      expect(unsealSession(flip(sealed, at), keys, now), `char ${at}`).toBeNull()
    }
  })

  it.each([
    ['empty', ''], ['garbage', 'hello'], ['v2 marker', 'v2.a.b.c'], ['three parts', 'v1.a.b'], ['five parts', 'v1.a.b.c.d'],
    ['padding', 'v1.AAAAAAAAAAAAAAAA=.AA.AAAAAAAAAAAAAAAAAAAAAA'], ['huge', `v1.${'A'.repeat(9000)}.A.A`],
  ])('refuses a malformed value (%s)', (_name, value) => {
    expect(unsealSession(value, keys, now)).toBeNull()
  })

  it.each(['v2', 'v0', 'V1', 'v11', 'v', '1', ''])('refuses a value sealed right with the right key but marked %j instead of v1', (marker) => {
    const sealed = sealSession(payload, keys)
    const remarked = `${marker}${sealed.slice(2)}`
    expect(unsealSession(sealed, keys, now)).toEqual(payload)
    expect(unsealSession(remarked, keys, now)).toBeNull()
    // Nor from the cache of opened values, which knows this value's tag already.
    const cache = new SessionCache(keys)
    expect(cache.open(sealed, now)).toEqual(payload)
    expect(cache.open(remarked, now)).toBeNull()
  })

  it('refuses the stray-bits twin of a valid part (non-canonical base64url)', () => {
    const sealed = sealSession(payload, keys)
    const [v, iv, ciphertext, tag] = sealed.split('.')
    // A 16-byte tag is 22 chars; the last char carries 4 unused bits. 'A'..'P' share the used bits of 'A'.
    const last = tag!.at(-1)!
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    const twin = alphabet[(alphabet.indexOf(last) & ~0b11) + ((alphabet.indexOf(last) & 0b11) ^ 1)]!
    const twinTag = tag!.slice(0, -1) + twin
    expect(Buffer.from(twinTag, 'base64url')).toEqual(Buffer.from(tag!, 'base64url'))
    expect(unsealSession([v, iv, ciphertext, twinTag].join('.'), keys, now)).toBeNull()
  })

  it('refuses a wrong key and a mock-mode key, and accepts an old key', () => {
    const sealed = sealSession(payload, keys)
    expect(unsealSession(sealed, deriveSealKeys([OTHER], 'session'), now)).toBeNull()
    expect(unsealSession(sealed, deriveSealKeys([SECRET], 'session-mock'), now)).toBeNull()
    expect(unsealSession(sealed, deriveSealKeys([OTHER, SECRET], 'session'), now)).toEqual(payload)
    const rotated = sealSession(payload, deriveSealKeys([OTHER, SECRET], 'session'))
    expect(unsealSession(rotated, deriveSealKeys([OTHER], 'session'), now)).toEqual(payload)
    expect(unsealSession(rotated, keys, now)).toBeNull()
  })

  it('refuses a payload issued 8 hours ago or more, or far in the future', () => {
    const sealed = sealSession(payload, keys)
    expect(unsealSession(sealed, keys, now + SESSION_TTL_MS - 1)).toEqual(payload)
    expect(unsealSession(sealed, keys, now + SESSION_TTL_MS)).toBeNull()
    expect(unsealSession(sealSession({ ...payload, iat: now + 10 * 60_000 }, keys), keys, now)).toBeNull()
  })

  it('refuses a payload without its session id (it could never be revoked)', () => {
    const { sid: _sid, ...withoutId } = payload
    expect(unsealSession(sealSession(withoutId as SessionPayload, keys), keys, now)).toBeNull()
    expect(unsealSession(sealSession({ ...payload, sid: 'short' }, keys), keys, now)).toBeNull()
  })

  it('refuses a well-sealed payload of the wrong shape', () => {
    const bad = { ...payload, user: { id: 1 } } as unknown as SessionPayload
    expect(unsealSession(sealSession(bad, keys), keys, now)).toBeNull()
    const noIat = { user } as unknown as SessionPayload
    expect(unsealSession(sealSession(noIat, keys), keys, now)).toBeNull()
  })
})

describe('liveToken', () => {
  it('gives the token until expiresAt', () => {
    expect(liveToken(payload, now)).toBe('token-123')
    expect(liveToken(payload, now + 60_000)).toBeUndefined()
    expect(liveToken({ ...payload, expiresAt: undefined }, now + 1e9)).toBe('token-123')
    expect(liveToken({ user, iat: now, sid: payload.sid }, now)).toBeUndefined()
    expect(liveToken(null, now)).toBeUndefined()
  })
})

describe('fitSessionToBudget', () => {
  const toSetCookie = (candidate: SessionPayload) => serializeCookie('svc_session', sealSession(candidate, keys), { maxAgeSeconds: 28_800, secure: true })
  const token = 't'.repeat(2400)

  it('keeps everything when it fits', () => {
    const fit = fitSessionToBudget({ ...payload, accessToken: token }, toSetCookie)
    expect(fit.ok && fit.trimmed).toBe('none')
  })
  it('drops permissions, then roles, and stays within 4096 bytes', () => {
    const many = Array.from({ length: 60 }, (_, i) => `/resource-${i}/action`)
    const fit = fitSessionToBudget({ ...payload, accessToken: token, user: { ...user, permissions: many } }, toSetCookie)
    expect(fit.ok && fit.trimmed).toBe('permissions')
    if (fit.ok) expect(setCookieLineBytes(fit.setCookie)).toBeLessThanOrEqual(COOKIE_BUDGET_BYTES)
    const roles = Array.from({ length: 60 }, (_, i) => `role-${i}`)
    const fit2 = fitSessionToBudget({ ...payload, accessToken: token, user: { ...user, permissions: many, roles } }, toSetCookie)
    expect(fit2.ok && fit2.trimmed).toBe('roles')
  })
  it('counts the whole Set-Cookie line, attributes included: 4096 bytes fit, 4097 do not', () => {
    const options = { maxAgeSeconds: 28_800, secure: true }
    const line = (valueBytes: number) => serializeCookie('svc_session', 'v'.repeat(valueBytes), options)
    // A fixed number, not one the code under test computes: the line `Set-Cookie: svc_session=<value>; Max-Age=28800;
    // Expires=<29 characters>; Path=/; HttpOnly; SameSite=Lax; Secure` is 24 + value + 94 bytes, 4096 with 3978.
    const edge = 3978
    expect(Buffer.byteLength(`Set-Cookie: ${line(edge)}`)).toBe(4096)
    expect(setCookieLineBytes(line(edge))).toBe(4096)
    expect(COOKIE_BUDGET_BYTES).toBe(4096)
    expect(line(edge)).toMatch(/; Max-Age=28800; Expires=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Secure$/)
    expect(fitSessionToBudget(payload, () => line(edge))).toMatchObject({ ok: true, trimmed: 'none' })
    expect(fitSessionToBudget(payload, () => line(edge + 1))).toEqual({ ok: false, bytes: 4097 })
    expect(fitSessionToBudget(payload, candidate => line(candidate.user.permissions.length ? edge + 1 : edge))).toMatchObject({ ok: true, trimmed: 'permissions' })
  })
  it('fails when even the bare session is too big', () => {
    const fit = fitSessionToBudget({ ...payload, accessToken: 't'.repeat(3200) }, toSetCookie)
    expect(fit.ok).toBe(false)
    if (!fit.ok) expect(fit.bytes).toBeGreaterThan(COOKIE_BUDGET_BYTES)
  })
})

describe('SessionCache', () => {
  it('opens like unsealSession and serves repeats from the cache, re-checking the 8-hour limit', () => {
    const cache = new SessionCache(keys, 2)
    const sealed = sealSession(payload, keys)
    expect(cache.open(sealed, now)).toEqual(payload)
    expect(cache.open(sealed, now)).toEqual(payload)
    expect(cache.size).toBe(1)
    expect(cache.open(sealed, now + SESSION_TTL_MS)).toBeNull()
    expect(cache.size).toBe(0)
  })
  it('keeps no refused value and stays within its bound', () => {
    const cache = new SessionCache(keys, 2)
    expect(cache.open('v1.a.b.c', now)).toBeNull()
    expect(cache.open(flip(sealSession(payload, keys), 40), now)).toBeNull()
    expect(cache.size).toBe(0)
    for (let i = 0; i < 5; i++) cache.open(sealSession(payload, keys), now)
    expect(cache.size).toBe(2)
  })
})

describe('sealed text', () => {
  it('holds only ASCII, so Vietnamese names and emoji survive the round trip', () => {
    const viet = { ...payload, user: { ...user, name: 'Nguyễn Thị Ánh 🌸' } }
    const sealed = sealSession(viet, keys)
    expect(unsealSession(sealed, keys, now)?.user.name).toBe('Nguyễn Thị Ánh 🌸')
    const [, iv, ciphertext, tag] = sealed.split('.').map(part => Buffer.from(part, 'base64url'))
    const decipher = createDecipheriv('aes-256-gcm', keys.keys[0]!, iv!)
    decipher.setAAD(keys.label)
    decipher.setAuthTag(tag!)
    const plain = Buffer.concat([decipher.update(ciphertext!), decipher.final()])
    expect(plain.every(byte => byte < 0x80)).toBe(true)
  })
})

describe('SessionCache keyed by tag', () => {
  it('does not serve a cached payload for another value that ends with the same tag', () => {
    const cache = new SessionCache(keys)
    const sealed = sealSession(payload, keys)
    expect(cache.open(sealed, now)).toEqual(payload)
    const forged = flip(sealed, 20)
    expect(forged.split('.')[3]).toBe(sealed.split('.')[3])
    expect(cache.open(forged, now)).toBeNull()
    expect(cache.open(sealed, now)).toEqual(payload)
  })
})
