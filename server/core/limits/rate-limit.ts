/**
 * Brute-force limits: failures counted per key in fixed windows. Each attempt reserves its place first (so a burst
 * of parallel attempts cannot slip past the limit), then is released unless it failed. Pure: memory counters only.
 */
import { createHash } from 'node:crypto'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

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
  limit: number
}

/**
 * The address a client is counted by: an IPv4 address as it is (IPv4-mapped IPv6 too), an IPv6 address by its /64
 * (one subscriber's whole network; an attacker holds billions of addresses in it). Anything else as it is.
 */
export function rateLimitAddress(ip: string): string {
  if (!isIP(ip)) return ip
  const address = ipaddr.process(ip)
  if (address.kind() === 'ipv4') return address.toString()
  return `${(address as ipaddr.IPv6).parts.slice(0, 4).map(part => part.toString(16)).join(':')}::/64`
}

const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 22)

/**
 * A key of fixed size for any text, so the stores are bounded in bytes whatever a client sends. The first part (the
 * client's address) is the key's hash tag: an address's keys share a Redis Cluster slot, so one script reserves them
 * together (`svc:rl:ip:{<address>}`, `svc:rl:u:{<address>}<address and username>`).
 */
export function limitKey(kind: 'u' | 'ip', address: string, ...rest: string[]): string {
  const tag = `{${digest(address)}}`
  return kind === 'ip' && !rest.length ? `svc:rl:ip:${tag}` : `svc:rl:${kind}:${tag}${digest([address, ...rest].join('\n'))}`
}

/**
 * Counters in memory, at most `maxKeys` of them (keys of fixed size: see limitKey), so memory is bounded in bytes.
 * When full, the least recently touched counter that is not blocking makes room; a blocking counter stays until its
 * window ends, whatever flood of other keys comes. Full of blocking counters: new keys are refused until one ends.
 * A refused attempt creates no counter.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly counters = new Map<string, Counter>()
  private cursor: MapIterator<[string, Counter]> | undefined

  constructor(readonly maxKeys = 100_000, private readonly now: () => number = Date.now) {}

  get size(): number {
    return this.counters.size
  }

  /** When the key's window ends (ms since the epoch), while it has a counter. */
  windowEnd(key: string): number | undefined {
    return this.counters.get(key)?.resetAt
  }

  /** The key's counter while its window lasts. */
  private live(key: string, time: number): Counter | undefined {
    const counter = this.counters.get(key)
    if (counter && counter.resetAt <= time) {
      this.counters.delete(key)
      return undefined
    }
    return counter
  }

  /**
   * The counter that has waited longest, from one Map iterator kept across calls: it stands at the oldest entry, as
   * every entry before it has been evicted or moved to the end. A fresh `for…of` would walk again over the slots V8
   * keeps for deleted entries until it rehashes: 6–47 µs an eviction with 100,000 counters, measured.
   */
  private oldest(): [string, Counter] | undefined {
    let step = this.cursor?.next()
    if (!step || step.done) {
      this.cursor = this.counters.entries()
      step = this.cursor.next()
    }
    return step.done ? undefined : step.value
  }

  /**
   * Frees one place, never one of `keep`; false when every other counter is blocking and live. Blocking ones met are
   * moved to the end, so the next search does not meet them again.
   */
  private makeRoom(time: number, keep: ReadonlySet<string>): boolean {
    for (let scanned = 0; scanned < this.counters.size; scanned++) {
      const [key, counter] = this.oldest()!
      this.counters.delete(key)
      if (keep.has(key) || (counter.resetAt > time && counter.count >= counter.limit)) this.counters.set(key, counter)
      else return true
    }
    return false
  }

  /** The soonest end of a window among the counters, in ms from `time`. */
  private soonestEnd(time: number): number {
    let soonest = Infinity
    for (const counter of this.counters.values()) soonest = Math.min(soonest, counter.resetAt)
    return Math.max(1, soonest - time)
  }

  reserveNow(entries: readonly LimitEntry[], windowMs: number): ReserveResult {
    const time = this.now()
    const active = entries.filter(entry => entry.limit > 0)
    let waitMs = 0
    for (const entry of active) {
      const counter = this.live(entry.key, time)
      if (counter && counter.count + 1 > entry.limit) waitMs = Math.max(waitMs, counter.resetAt - time)
    }
    if (waitMs > 0) return { ok: false, retryAfterMs: waitMs }
    const missing = active.filter(entry => !this.counters.has(entry.key))
    const keep = new Set(active.map(entry => entry.key))
    while (this.counters.size + missing.length > this.maxKeys) {
      if (!this.makeRoom(time, keep)) return { ok: false, retryAfterMs: this.soonestEnd(time) }
    }
    for (const entry of active) {
      const counter = this.counters.get(entry.key) ?? { count: 0, resetAt: time + windowMs, limit: entry.limit }
      counter.count++
      counter.limit = entry.limit
      // Re-insert: Map order is then least recently touched first.
      this.counters.delete(entry.key)
      this.counters.set(entry.key, counter)
    }
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
