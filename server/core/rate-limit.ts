/**
 * Brute-force limits: failures counted per key in fixed windows. Each attempt reserves its place first (so a burst
 * of parallel attempts cannot slip past the limit), then is released unless it failed. Pure: memory counters only.
 */

export interface LimitEntry {
  key: string
  /** Failures allowed in the window; 0 turns this key off. */
  limit: number
}

export type ReserveResult = { ok: true } | { ok: false, retryAfterMs: number }

/** Where the counters live: memory, or Redis shared by several instances. */
export interface RateLimitStore {
  reserve(entries: readonly LimitEntry[], windowMs: number): Promise<ReserveResult>
  release(keys: readonly string[]): Promise<void>
  clear(key: string): Promise<void>
}

interface Counter {
  count: number
  resetAt: number
}

/**
 * Counters in memory with a bounded number of keys: the least recently touched key goes first, so a flood of
 * distinct usernames or addresses cannot grow memory without limit (and an active attacker's key stays fresh).
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly counters = new Map<string, Counter>()

  constructor(private readonly maxKeys = 100_000, private readonly now: () => number = Date.now) {}

  get size(): number {
    return this.counters.size
  }

  private current(key: string, windowMs: number): Counter {
    const time = this.now()
    let counter = this.counters.get(key)
    if (!counter || counter.resetAt <= time) counter = { count: 0, resetAt: time + windowMs }
    // Re-insert: Map order is then least recently touched first.
    this.counters.delete(key)
    this.counters.set(key, counter)
    while (this.counters.size > this.maxKeys) this.counters.delete(this.counters.keys().next().value!)
    return counter
  }

  reserveNow(entries: readonly LimitEntry[], windowMs: number): ReserveResult {
    const active = entries.filter(entry => entry.limit > 0)
    const counters = active.map(entry => this.current(entry.key, windowMs))
    let waitMs = 0
    active.forEach((entry, i) => {
      if (counters[i]!.count + 1 > entry.limit) waitMs = Math.max(waitMs, counters[i]!.resetAt - this.now())
    })
    if (waitMs > 0) return { ok: false, retryAfterMs: waitMs }
    for (const counter of counters) counter.count++
    return { ok: true }
  }

  async reserve(entries: readonly LimitEntry[], windowMs: number): Promise<ReserveResult> {
    return this.reserveNow(entries, windowMs)
  }

  async release(keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      const counter = this.counters.get(key)
      if (counter && counter.count > 0) counter.count--
    }
  }

  async clear(key: string): Promise<void> {
    this.counters.delete(key)
  }
}

/** Seconds to tell the client (Retry-After), at least 1. */
export function retryAfterSeconds(retryAfterMs: number): number {
  return Math.max(1, Math.ceil(retryAfterMs / 1000))
}
