import type { Redis } from 'ioredis'
import { MemoryRateLimitStore, type LimitEntry, type RateLimitStore, type ReserveResult } from '../core/rate-limit'
import { withinBudget } from './redis'
import { throttledWarning } from './throttled-warning'

/**
 * When any key is at its limit, returns the longest remaining window in ms and counts nothing (a refused attempt
 * creates no key); else increments every key (expiry set on creation) and returns 0. One round trip, atomic.
 */
const RESERVE_SCRIPT = `
local window = tonumber(ARGV[1])
local wait = 0
for i, key in ipairs(KEYS) do
  local count = tonumber(redis.call('GET', key) or '0')
  if count + 1 > tonumber(ARGV[i + 1]) then
    local ttl = redis.call('PTTL', key)
    if ttl < 0 then ttl = window end
    if ttl > wait then wait = ttl end
  end
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  if redis.call('INCR', key) == 1 then redis.call('PEXPIRE', key, window) end
end
return 0`

const RELEASE_SCRIPT = `
for i, key in ipairs(KEYS) do
  local count = tonumber(redis.call('GET', key) or '0')
  if count > 0 then redis.call('DECR', key) end
end
return 0`

/**
 * Counters in Redis, shared by every gateway instance. Redis down or slow: each call falls back to local counters
 * after at most ~0.5 s (no offline queue), and the outage is logged at most once a minute.
 */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly say = throttledWarning()

  constructor(private readonly redis: Redis, private readonly local = new MemoryRateLimitStore()) {
    redis.on('error', error => this.warn(error))
  }

  private warn(error: unknown): void {
    this.say(`Redis không dùng được (${error instanceof Error ? error.message : String(error)}): dùng bộ đếm cục bộ.`)
  }

  /** Runs a Redis call within the budget; undefined when it failed (already logged). */
  private async attempt<T>(call: () => Promise<T>): Promise<T | undefined> {
    try {
      return await withinBudget(call)
    }
    catch (error) {
      this.warn(error)
      return undefined
    }
  }

  async reserve(entries: readonly LimitEntry[], windowMs: number): Promise<ReserveResult> {
    const active = entries.filter(entry => entry.limit > 0)
    if (!active.length) return { ok: true }
    const wait = await this.attempt(() => this.redis.eval(RESERVE_SCRIPT, active.length, ...active.map(e => e.key), windowMs, ...active.map(e => e.limit)) as Promise<number>)
    if (wait === undefined) return this.local.reserve(entries, windowMs)
    return wait > 0 ? { ok: false, retryAfterMs: Number(wait) } : { ok: true }
  }

  async release(keys: readonly string[]): Promise<void> {
    if (!keys.length) return
    const done = await this.attempt(() => this.redis.eval(RELEASE_SCRIPT, keys.length, ...keys))
    if (done === undefined) await this.local.release(keys)
  }

  async clear(key: string): Promise<void> {
    const done = await this.attempt(() => this.redis.del(key))
    if (done === undefined) await this.local.clear(key)
  }
}
