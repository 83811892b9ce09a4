import { PendingCounts, type PendingCount } from '../core/limits/pending-counts'
import { MemoryRateLimitStore, type LimitEntry, type RateLimitStore, type ReserveResult } from '../core/limits/rate-limit'
import { useLogger } from '../ops/logger'
import { throttledWarning } from '../ops/throttled-warning'
import { hashTag, withinBudget, type RedisClient } from './redis'

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
 * Carries what was counted while Redis was away: per key (ARGV: clear flag, count, window left in ms), a clear first,
 * then the count added to what Redis holds (other instances' counts included), the key's window the longer of the two.
 */
const CARRY_SCRIPT = `
for i, key in ipairs(KEYS) do
  if ARGV[i * 3 - 2] == '1' then redis.call('DEL', key) end
  local count, window = tonumber(ARGV[i * 3 - 1]), tonumber(ARGV[i * 3])
  if count > 0 then
    redis.call('INCRBY', key, count)
    if redis.call('PTTL', key) < window then redis.call('PEXPIRE', key, window) end
  end
end
return 0`

/** Keys carried to Redis in one round trip at most. */
const CARRY_BATCH = 200
/** What is left to carry is tried again this often while Redis is connected. */
const RETRY_MS = 1_000

/** A Redis call's outcome: its value, or a failure (logged) and whether Redis surely did not run it. */
type Outcome<T> = { value: T } | { missed: boolean }

/**
 * Counters in Redis, shared by every gateway instance. Redis down or slow: each call falls back to local counters
 * after at most ~0.5 s (no offline queue), and the outage is logged at most once a minute. What is counted or cleared
 * locally while Redis surely did not get it (before it connects, during an outage) is kept and carried into Redis on
 * each (re)connection, ahead of any later call on it, so the limits hold across the gap.
 */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly say = throttledWarning()
  private readonly pending: PendingCounts
  private carrying: Promise<void> | undefined
  private retryTimer: NodeJS.Timeout | undefined
  private markCaughtUp: () => void = () => {}
  /** Resolves the first time Redis is connected and holds what was counted here before (the server's readiness). */
  readonly caughtUp = new Promise<void>((resolve) => {
    this.markCaughtUp = resolve
  })

  constructor(private readonly redis: RedisClient, private readonly local = new MemoryRateLimitStore()) {
    this.pending = new PendingCounts(local.maxKeys)
    redis.on('error', error => this.warn(error))
    redis.on('ready', () => void this.carry())
    redis.on('end', () => this.stopRetrying())
    if (redis.status === 'ready') void this.carry()
  }

  private warn(error: unknown): void {
    this.say(`Redis không dùng được (${error instanceof Error ? error.message : String(error)}): dùng bộ đếm cục bộ.`)
  }

  /** Runs a Redis call (`operation`: its command, for tracing) within the budget. */
  private async attempt<T>(operation: string, call: () => Promise<T>): Promise<Outcome<T>> {
    // Without an offline queue, a call made while the connection is not ready is never sent.
    const sent = this.redis.status === 'ready'
    try {
      return { value: await withinBudget(call, operation) }
    }
    catch (error) {
      this.warn(error)
      // Refused by Redis (READONLY, ...): not run either. One that timed out may still run there: not carried.
      return { missed: !sent || (error as Error | null)?.name === 'ReplyError' }
    }
  }

  async reserve(entries: readonly LimitEntry[], windowMs: number): Promise<ReserveResult> {
    const active = entries.filter(entry => entry.limit > 0)
    if (!active.length) return { ok: true }
    const outcome = await this.attempt('EVAL', () => this.redis.eval(RESERVE_SCRIPT, active.length, ...active.map(e => e.key), windowMs, ...active.map(e => e.limit)) as Promise<number>)
    if ('value' in outcome) return outcome.value > 0 ? { ok: false, retryAfterMs: Number(outcome.value) } : { ok: true }
    const result = this.local.reserveNow(entries, windowMs)
    if (result.ok && outcome.missed) {
      for (const entry of active) this.pending.add(entry.key, this.local.windowEnd(entry.key) ?? Date.now() + windowMs)
      this.retryWhileLeft()
    }
    return result
  }

  async release(keys: readonly string[]): Promise<void> {
    if (!keys.length) return
    const outcome = await this.attempt('EVAL', () => this.redis.eval(RELEASE_SCRIPT, keys.length, ...keys))
    if ('value' in outcome) return
    await this.local.release(keys)
    if (outcome.missed) for (const key of keys) this.pending.subtract(key)
  }

  async clear(key: string): Promise<void> {
    const outcome = await this.attempt('DEL', () => this.redis.del(key))
    if ('value' in outcome) return this.pending.cleared(key)
    await this.local.clear(key)
    // Carried ahead of what is counted after it. A DEL that timed out may have run already: a second one clears again.
    this.pending.keepClear(key)
    this.retryWhileLeft()
  }

  /** One carry at a time: a second caller shares the one under way. */
  private carry(): Promise<void> {
    this.carrying ??= this.carryPending().finally(() => {
      this.carrying = undefined
    })
    return this.carrying
  }

  /**
   * Sends what is pending in batches; what Redis does not take is kept for the next try. The first batch is written
   * before this returns to the event loop: on a (re)connection, ahead of any other call on it.
   */
  private async carryPending(): Promise<void> {
    if (this.redis.status !== 'ready') return
    const taken = this.pending.take()
    let sent = 0
    try {
      for (; sent < taken.length; sent += CARRY_BATCH) await this.carryBatch(taken.slice(sent, sent + CARRY_BATCH))
    }
    catch (error) {
      this.warn(error)
    }
    this.pending.putBack(taken.slice(sent))
    if (sent > 0) {
      const carried = taken.slice(0, sent)
      useLogger().info({ counters: carried.filter(entry => entry.count > 0).length, clears: carried.filter(entry => entry.clear).length }, 'Redis đã nhận các bộ đếm đăng nhập đếm cục bộ khi chưa dùng được Redis.')
    }
    if (this.pending.size) return this.retryWhileLeft()
    this.stopRetrying()
    this.markCaughtUp()
  }

  /** One script per hash tag (an address's keys): on Redis Cluster a script's keys must share a slot. */
  private carryBatch(batch: readonly PendingCount[]): Promise<unknown> {
    const now = Date.now()
    const groups = new Map<string, PendingCount[]>()
    for (const entry of batch) groups.set(hashTag(entry.key), [...groups.get(hashTag(entry.key)) ?? [], entry])
    return withinBudget(() => Promise.all([...groups.values()].map((group) => {
      const args = group.flatMap(entry => [entry.clear ? 1 : 0, entry.count, Math.max(1, entry.resetAt - now)])
      return this.redis.eval(CARRY_SCRIPT, group.length, ...group.map(entry => entry.key), ...args)
    })), 'EVAL')
  }

  /** A carry that failed while Redis stayed connected (a slow moment) is tried again, not left to the next outage. */
  private retryWhileLeft(): void {
    this.retryTimer ??= setInterval(() => {
      if (this.redis.status === 'ready' && this.pending.size) void this.carry()
    }, RETRY_MS).unref()
  }

  private stopRetrying(): void {
    clearInterval(this.retryTimer)
    this.retryTimer = undefined
  }
}
