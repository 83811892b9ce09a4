import type { Socket } from 'node:net'
import { describe, expect, it, vi } from 'vitest'
import { MemoryRateLimitStore } from '../../server/core/rate-limit'
import { connectRedis } from '../../server/lib/redis'
import { useLogger } from '../../server/lib/logger'
import { RedisRateLimitStore } from '../../server/lib/redis-rate-limit'
import { freePort } from '../support/gateway'
import { whenReady } from '../support/redis'
import { useStack } from '../support/stack'
import { readByPeer } from '../support/tcp'

const stack = useStack({ iam: false, backend: 'none', redis: true })

const entries = (user: string) => [{ key: `t:u:${user}`, limit: 3 }, { key: 't:ip', limit: 100 }]

describe('RedisRateLimitStore against a real redis-server', () => {
  it('shares counts between two stores (two instances), atomically under parallel attempts', async () => {
    const [a, b] = await Promise.all([connectRedis(stack.redis.url), connectRedis(stack.redis.url)])
    await Promise.all([whenReady(a), whenReady(b)])
    try {
      const first = new RedisRateLimitStore(a)
      const second = new RedisRateLimitStore(b)
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? first : second).reserve(entries('burst'), 60_000)))
      expect(results.filter(result => result.ok)).toHaveLength(3)
      const refused = results.find(result => !result.ok)
      expect(refused && !refused.ok && refused.retryAfterMs).toBeGreaterThan(59_000)
      await first.release(['t:u:burst', 't:ip'])
      expect((await second.reserve(entries('burst'), 60_000)).ok).toBe(true)
      await second.clear('t:u:burst')
      expect((await first.reserve(entries('burst'), 60_000)).ok).toBe(true)
      expect(await a.pttl('t:u:burst')).toBeGreaterThan(59_000)
    }
    finally {
      a.disconnect()
      b.disconnect()
    }
  })

  it('falls back to local counters after ~0.5 s when Redis is slow', async () => {
    const warn = vi.spyOn(useLogger(), 'warn').mockImplementation(() => {})
    const [client, blocker] = await Promise.all([connectRedis(stack.redis.url), connectRedis(stack.redis.url)])
    await Promise.all([whenReady(client), whenReady(blocker)])
    try {
      const store = new RedisRateLimitStore(client)
      const sleeping = blocker.call('DEBUG', 'SLEEP', '2').catch(() => undefined)
      // Redis has read the command (and, single-threaded, sleeps in it) before the store asks anything.
      await readByPeer((blocker as unknown as { stream: Socket }).stream)
      const started = Date.now()
      expect((await store.reserve(entries('slow'), 60_000)).ok).toBe(true)
      const elapsed = Date.now() - started
      expect(elapsed).toBeGreaterThanOrEqual(400)
      // Waiting for Redis would take its 2 s sleep; room is left for a busy machine (other test files beside it).
      expect(elapsed).toBeLessThan(1_500)
      expect(warn).toHaveBeenCalled()
      await sleeping
    }
    finally {
      client.disconnect()
      blocker.disconnect()
      warn.mockRestore()
    }
  })

  it('falls back to local counters at once when Redis is down, logging once', async () => {
    const warn = vi.spyOn(useLogger(), 'warn').mockImplementation(() => {})
    const down = await connectRedis(`redis://127.0.0.1:${await freePort()}`)
    try {
      const store = new RedisRateLimitStore(down, new MemoryRateLimitStore())
      for (let i = 0; i < 3; i++) {
        const started = Date.now()
        expect((await store.reserve(entries('offline'), 60_000)).ok).toBe(true)
        expect(Date.now() - started).toBeLessThan(700)
      }
      expect((await store.reserve(entries('offline'), 60_000)).ok).toBe(false)
      expect(warn.mock.calls.filter(call => String(call[0]).includes('Redis không dùng được'))).toHaveLength(1)
    }
    finally {
      down.disconnect()
      warn.mockRestore()
    }
  })
})
