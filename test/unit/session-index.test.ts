import { describe, expect, it } from 'vitest'
import { deviceLabel } from '../../server/core/session/device-label'
import { SESSION_TTL_MS } from '../../server/core/session/seal'
import { entryState, overCap, parseIndexedSession, parsePublicSessionId, publicSessionId, userIndexKey, type IndexedSession } from '../../server/core/session/session-index'

describe('deviceLabel', () => {
  it.each([
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', 'Chrome on Windows'],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1', 'Safari on iPhone'],
    ['Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/126.0 Mobile/15E148 Safari/604.1', 'Chrome on iPad'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15', 'Safari on macOS'],
    ['Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0 Mobile Safari/537.36', 'Samsung Internet on Android'],
    ['Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', 'Firefox on Linux'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0', 'Edge on Windows'],
    ['Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', 'Chrome on ChromeOS'],
    ['curl/8.5.0', 'curl'],
    ['Windows', 'Windows'],
    ['', ''],
    [undefined, ''],
  ])('%s: %s', (agent, label) => {
    expect(deviceLabel(agent)).toBe(label)
  })

  it('is made of fixed words only: a hostile User-Agent never reaches the label, a long one is read in part', () => {
    expect(deviceLabel('<script>alert(1)</script> Firefox/1 \r\nSet-Cookie: x')).toBe('Firefox')
    expect(deviceLabel(`${'A'.repeat(600)} Chrome/1 Windows`)).toBe('')
    expect(deviceLabel(`Chrome/1 (Windows) ${'('.repeat(100_000)}`)).toBe('Chrome on Windows')
    expect(deviceLabel(42 as unknown as string)).toBe('')
    for (const agent of ['Edg/1 Samsung SamsungBrowser/1 iPhone iPad Android Macintosh', 'x'.repeat(10_000)]) expect(deviceLabel(agent).length).toBeLessThanOrEqual(30)
  })
})

describe('the index of a user\'s sessions', () => {
  it('keys every user in a slot of their own, whatever their id holds', () => {
    expect(userIndexKey('u-sale')).toBe('svc:{u:u-sale}:sessions')
    expect(userIndexKey('a}b{c:d')).toBe('svc:{u:a%7Db%7Bc%3Ad}:sessions')
    expect(userIndexKey('x'.repeat(500))).toMatch(/^svc:\{u:h~[\w-]{43}\}:sessions$/)
  })

  it('names a session by its sid and its user, and reads back only the exact spelling', () => {
    const id = publicSessionId('u-Người dùng', 'abcdefghijklmnop')
    expect(parsePublicSessionId(id)).toEqual({ sid: 'abcdefghijklmnop', userId: 'u-Người dùng' })
    const [sid, user] = publicSessionId('u-a', 'abcdefghijklmnop').split('.') as [string, string]
    for (const forged of [
      `${sid}.`, `.${user}`, `short.${user}`, `${sid}.${user}.x`, `${sid}+.${user}`, 'x'.repeat(2000), 42, null, undefined, {},
      `${sid}.${Buffer.from([0xff, 0xfe]).toString('base64url')}`,
    ]) {
      const parsed = parsePublicSessionId(forged)
      if (parsed) expect(publicSessionId(parsed.userId, parsed.sid)).toBe(forged)
    }
    expect(parsePublicSessionId(`${sid}.${user}.x`)).toBeUndefined()
    expect(parsePublicSessionId(`${sid}.${Buffer.from([0xff, 0xfe]).toString('base64url')}`)).toBeUndefined()
    expect(parsePublicSessionId('x'.repeat(2000))).toBeUndefined()
    expect(parsePublicSessionId(`${sid}.QQ`)).toEqual({ sid, userId: 'A' })
    expect(parsePublicSessionId(`${sid}.QR`)).toBeUndefined()
  })

  it('reads back only entries, with a last-seen time never before the login', () => {
    expect(parseIndexedSession('{"sid":"s","iat":10,"seen":5,"address":"::1","device":"Chrome"}')).toEqual({ sid: 's', iat: 10, seen: 10, address: '::1', device: 'Chrome' })
    expect(parseIndexedSession('{"sid":"s","iat":10,"seen":20}')).toEqual({ sid: 's', iat: 10, seen: 20, address: '', device: '' })
    for (const text of ['', 'null', '[]', '{"sid":1,"iat":1}', '{"sid":"s"}']) expect(parseIndexedSession(text)).toBeUndefined()
  })

  const entry = (sid: string, iat: number, seen = iat): IndexedSession => ({ sid, iat, seen, address: '', device: '' })

  it('says which entries are live: not revoked, within 8 hours, not idle past the window', () => {
    const now = 10 * SESSION_TTL_MS
    expect(entryState(entry('s', now - 1000), now, 0, false)).toBe('live')
    expect(entryState(entry('s', now - 1000), now, 0, true)).toBe('ended')
    expect(entryState(entry('s', now - SESSION_TTL_MS), now, 0, false)).toBe('ended')
    expect(entryState(entry('s', now - SESSION_TTL_MS + 1), now, 0, false)).toBe('live')
    expect(entryState(entry('s', now - 60_000, now - 60_000), now, 60_000, false)).toBe('idle')
    expect(entryState(entry('s', now - 60_000, now - 59_999), now, 60_000, false)).toBe('live')
  })

  it('ends the oldest logins past the cap, never the new session', () => {
    const live = [entry('c', 3), entry('a', 1), entry('new', 0), entry('b', 2)]
    expect(overCap(live, 0, 'new')).toEqual([])
    expect(overCap(live, 4, 'new')).toEqual([])
    expect(overCap(live, 2, 'new').map(e => e.sid)).toEqual(['a', 'b'])
    expect(overCap(live, 1, 'new').map(e => e.sid)).toEqual(['a', 'b', 'c'])
  })
})
