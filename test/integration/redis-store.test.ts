import type { Socket } from 'node:net'
import type { Redis } from 'ioredis'
import { describe, expect, it, vi } from 'vitest'
import { MemoryRateLimitStore } from '../../server/core/limits/rate-limit'
import { connectRedis } from '../../server/stores/redis'
import { useLogger } from '../../server/ops/logger'
import { RedisRateLimitStore } from '../../server/stores/redis-rate-limit'
import { freePort } from '../support/gateway'
import { redisClient, whenReady } from '../support/redis'
import { useStack } from '../support/stack'
import { readByPeer } from '../support/tcp'

const stack = useStack({ iam: false, backend: 'none', redis: true })

/** Disconnects a client, as an outage would, and resolves once it has (ready to connect again). */
async function cutOff(client: Redis): Promise<void> {
  const ended = new Promise(resolve => client.once('end', resolve))
  client.disconnect()
  await ended
}

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

  it('carries what two stores counted and cleared while away into Redis when it is back: a clear before the counts after it, counts added up, each window the longer', async () => {
    const [a, b] = await Promise.all([connectRedis(stack.redis.url), connectRedis(stack.redis.url)])
    const probe = await redisClient(stack.redis.url)
    await Promise.all([whenReady(a), whenReady(b)])
    const away = [{ key: 't:u:away', limit: 3 }, { key: 't:ip:away', limit: 100 }]
    const warn = vi.spyOn(useLogger(), 'warn').mockImplementation(() => {})
    try {
      const first = new RedisRateLimitStore(a, new MemoryRateLimitStore())
      const second = new RedisRateLimitStore(b, new MemoryRateLimitStore())
      for (let i = 0; i < 2; i++) expect((await first.reserve(away, 60_000)).ok).toBe(true)
      await probe.pexpire('t:ip:away', 5_000)
      // Both lose Redis (which keeps its data): one failure, an accepted login (clear), one failure; and one elsewhere.
      await Promise.all([cutOff(a), cutOff(b)])
      expect((await first.reserve(away, 60_000)).ok).toBe(true)
      await first.clear('t:u:away')
      expect((await first.reserve(away, 60_000)).ok).toBe(true)
      expect((await second.reserve(away, 60_000)).ok).toBe(true)
      expect(await probe.mget('t:u:away', 't:ip:away')).toEqual(['2', '2'])

      await a.connect()
      // The clear went ahead of the failure after it: the two failures before it are gone, in Redis too.
      await expect.poll(() => probe.get('t:u:away'), { timeout: 5_000 }).toBe('1')
      await b.connect()
      await expect.poll(() => probe.mget('t:u:away', 't:ip:away'), { timeout: 5_000 }).toEqual(['2', '5'])
      // The window of the counts made while away (60 s) outlasts what Redis had left (5 s): the longer holds.
      expect(await probe.pttl('t:ip:away')).toBeGreaterThan(50_000)
      expect(await probe.pttl('t:u:away')).toBeLessThanOrEqual(60_000)
      // Carried once: a later reconnection sends nothing again (a carry would go ahead of this read on its connection).
      await cutOff(b)
      await b.connect()
      expect(await b.mget('t:u:away', 't:ip:away')).toEqual(['2', '5'])
    }
    finally {
      a.disconnect()
      b.disconnect()
      probe.disconnect()
      warn.mockRestore()
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
      // Redis ran the late call once it woke: the local count is not carried as well (a carry on reconnection would
      // go ahead of this read).
      await cutOff(client)
      await client.connect()
      expect(await client.get('t:u:slow')).toBe('1')
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
