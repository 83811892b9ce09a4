import { describe, expect, it } from 'vitest'
import { MemoryRateLimitStore, retryAfterSeconds } from '../../server/core/rate-limit'

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

describe('retryAfterSeconds', () => {
  it.each([[1, 1], [999, 1], [1000, 1], [1001, 2], [0, 1], [899_500, 900]])('%d ms -> %d s', (ms, seconds) => {
    expect(retryAfterSeconds(ms)).toBe(seconds)
  })
})
