import { describe, expect, it } from 'vitest'
import { limitKey, MemoryRateLimitStore, rateLimitAddress, retryAfterSeconds } from '../../server/core/limits/rate-limit'

function clockedStore(maxKeys = 1000) {
  let time = 1_000_000
  const store = new MemoryRateLimitStore(maxKeys, () => time)
  const advance = (ms: number) => {
    time += ms
  }
  return { store, advance }
}

const user = { key: 'u', limit: 3 }
const ip = { key: 'ip', limit: 5 }

describe('MemoryRateLimitStore', () => {
  it('refuses past the limit within the window, with the time left, and recovers after it', () => {
    const { store, advance } = clockedStore()
    for (let i = 0; i < 3; i++) expect(store.reserveNow([user], 60_000)).toEqual({ ok: true })
    advance(20_000)
    expect(store.reserveNow([user], 60_000)).toEqual({ ok: false, retryAfterMs: 40_000 })
    advance(40_000)
    expect(store.reserveNow([user], 60_000)).toEqual({ ok: true })
  })

  it('reserves all keys or none: a refusal by one key does not count on the other', () => {
    const { store } = clockedStore()
    const tight = { key: 'ip', limit: 1 }
    expect(store.reserveNow([user, tight], 60_000).ok).toBe(true)
    expect(store.reserveNow([user, tight], 60_000).ok).toBe(false)
    expect(store.reserveNow([user], 60_000).ok).toBe(true)
    expect(store.reserveNow([user], 60_000).ok).toBe(true)
    expect(store.reserveNow([user], 60_000).ok).toBe(false)
  })

  it('gives a place back on release and forgets a key on clear', async () => {
    const { store } = clockedStore()
    for (let i = 0; i < 3; i++) store.reserveNow([user], 60_000)
    await store.release(['u'])
    expect(store.reserveNow([user], 60_000).ok).toBe(true)
    expect(store.reserveNow([user], 60_000).ok).toBe(false)
    await store.clear('u')
    expect(store.reserveNow([user], 60_000).ok).toBe(true)
  })

  it('counts parallel attempts before any of them finishes', async () => {
    const { store } = clockedStore()
    const results = await Promise.all(Array.from({ length: 10 }, () => store.reserve([user, ip], 60_000)))
    expect(results.filter(result => result.ok)).toHaveLength(3)
  })

  it('ignores a limit of 0 (turned off)', () => {
    const { store } = clockedStore()
    for (let i = 0; i < 50; i++) expect(store.reserveNow([{ key: 'off', limit: 0 }], 60_000).ok).toBe(true)
    expect(store.size).toBe(0)
  })

  it('stays within its key bound under a flood of distinct keys, keeping the busiest key', () => {
    const { store } = clockedStore(100)
    for (let i = 0; i < 5_000; i++) {
      store.reserveNow([{ key: `flood-${i}`, limit: 5 }, ip], 60_000)
      if (store.size > 100) throw new Error('bound exceeded')
    }
    // The shared IP key was touched on every attempt: it survived and has hit its limit.
    expect(store.reserveNow([ip], 60_000).ok).toBe(false)
  })
})

describe('MemoryRateLimitStore under attack', () => {
  it('keeps a blocking counter through any flood of other keys until its window ends', () => {
    const { store, advance } = clockedStore(100)
    for (let i = 0; i < 3; i++) store.reserveNow([user], 60_000)
    expect(store.reserveNow([user], 60_000).ok).toBe(false)
    for (let i = 0; i < 100_000; i++) store.reserveNow([{ key: `flood-${i}`, limit: 5 }], 60_000)
    expect(store.size).toBeLessThanOrEqual(100)
    expect(store.reserveNow([user], 60_000).ok).toBe(false)
    advance(60_000)
    expect(store.reserveNow([user], 60_000).ok).toBe(true)
  })

  it('creates no counter for a refused attempt', () => {
    const { store } = clockedStore()
    const tight = { key: 'ip', limit: 1 }
    store.reserveNow([tight], 60_000)
    const before = store.size
    for (let i = 0; i < 50; i++) expect(store.reserveNow([{ key: `user-${i}`, limit: 5 }, tight], 60_000).ok).toBe(false)
    expect(store.size).toBe(before)
  })

  it('refuses new keys while it is full of blocking counters, until the first window ends', () => {
    const { store, advance } = clockedStore(100)
    for (let i = 0; i < 100; i++) {
      advance(10)
      expect(store.reserveNow([{ key: `blocked-${i}`, limit: 1 }], 60_000).ok).toBe(true)
    }
    const full = store.reserveNow([{ key: 'newcomer', limit: 5 }], 60_000)
    expect(full).toEqual({ ok: false, retryAfterMs: 60_000 - 990 })
    advance(60_000 - 990)
    expect(store.reserveNow([{ key: 'newcomer', limit: 5 }], 60_000).ok).toBe(true)
    expect(store.size).toBe(100)
  })
})

describe('rateLimitAddress', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff:ffff:ffff:0009', '2001:db8:1:2::/64'],
    ['2001:DB8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    // IPv4-mapped IPv6 is the IPv4 client it names, not one key shared by every such spelling.
    ['::ffff:192.0.2.1', '192.0.2.1'],
    ['::FFFF:c000:0201', '192.0.2.1'],
    ['0:0:0:0:0:ffff:192.0.2.1', '192.0.2.1'],
    ['2001:db8::', '2001:db8:0:0::/64'],
    ['2130706433', '2130706433'],
    ['not-an-ip', 'not-an-ip'],
  ])('%s is counted as %s', (ip, expected) => {
    expect(rateLimitAddress(ip)).toBe(expected)
  })
})

describe('limitKey', () => {
  it('has one size whatever it is given', () => {
    const sizes = new Set([limitKey('u', 'a', 'b'), limitKey('u', '1.2.3.4', 'x'.repeat(100_000)), limitKey('u', '')].map(key => key.length))
    expect(sizes).toEqual(new Set(['svc:rl:u:{}'.length + 44]))
    expect(limitKey('ip', 'x'.repeat(100_000))).toHaveLength('svc:rl:ip:{}'.length + 22)
    expect(limitKey('u', 'a', 'b')).not.toBe(limitKey('u', 'ab'))
  })

  it('tags an address\'s keys alike, so they share a Redis Cluster slot (one script counts both)', () => {
    const tag = (key: string) => /\{([^}]+)\}/.exec(key)?.[1]
    expect(tag(limitKey('u', '192.0.2.1', 'alice'))).toBe(tag(limitKey('ip', '192.0.2.1')))
    expect(tag(limitKey('u', '192.0.2.1', 'alice'))).toBe(tag(limitKey('u', '192.0.2.1', 'bob')))
    expect(tag(limitKey('ip', '192.0.2.1'))).not.toBe(tag(limitKey('ip', '192.0.2.2')))
    expect(limitKey('ip', '192.0.2.1')).toMatch(/^svc:rl:ip:\{[\w-]{22}\}$/)
  })
})

describe('retryAfterSeconds', () => {
  it.each([[1, 1], [999, 1], [1000, 1], [1001, 2], [0, 1], [899_500, 900]])('%d ms -> %d s', (ms, seconds) => {
    expect(retryAfterSeconds(ms)).toBe(seconds)
  })
})
