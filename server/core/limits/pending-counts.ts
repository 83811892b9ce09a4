/**
 * What the login limits counted while Redis was away (before it connected, or during an outage), kept to be carried
 * into Redis when it is back, so the limit holds across the gap. Pure: memory only, bounded in keys.
 */

/** One key's pending part: failures Redis has not got (in a window ending at `resetAt`), after a clear if `clear`. */
export interface PendingCount {
  key: string
  count: number
  /** When the window of these failures ends (ms since the epoch), as the local counter that took them says. */
  resetAt: number
  /** A clear (an accepted login) Redis has not got: to apply before the count. */
  clear: boolean
}

export class PendingCounts {
  private readonly kept = new Map<string, PendingCount>()
  /** Keys cleared in Redis while a carry was under way (between take and putBack): what it took of them is void. */
  private voided: Set<string> | undefined

  constructor(private readonly maxKeys = 100_000, private readonly now: () => number = Date.now) {}

  get size(): number {
    return this.kept.size
  }

  /** The key's entry, made when missing; at the bound, the oldest entry makes room (a lost count, never a crash). */
  private entry(key: string): PendingCount {
    let entry = this.kept.get(key)
    if (!entry) {
      if (this.kept.size >= this.maxKeys) this.kept.delete(this.kept.keys().next().value!)
      entry = { key, count: 0, resetAt: 0, clear: false }
      this.kept.set(key, entry)
    }
    return entry
  }

  /** One failure Redis has not got, in a window that ends at `resetAt`. */
  add(key: string, resetAt: number): void {
    const entry = this.entry(key)
    entry.count++
    entry.resetAt = Math.max(entry.resetAt, resetAt)
  }

  /** One failure fewer (an attempt given back while Redis was away). */
  subtract(key: string): void {
    const entry = this.kept.get(key)
    if (!entry || entry.count === 0) return
    entry.count--
    if (entry.count === 0 && !entry.clear) this.kept.delete(key)
  }

  /** A clear Redis has not got: what was kept for the key before it is void; it goes ahead of what is counted after. */
  keepClear(key: string): void {
    const entry = this.entry(key)
    entry.count = 0
    entry.clear = true
  }

  /** A clear Redis took: what was kept for the key before it is void, a carry under way included. */
  cleared(key: string): void {
    this.kept.delete(key)
    if (this.voided && this.voided.size < this.maxKeys) this.voided.add(key)
  }

  /**
   * Everything to carry (clears, and counts whose window has not ended), in the order kept; the store is emptied. A
   * carry has begun: end it with putBack, with what Redis did not take (or nothing).
   */
  take(): PendingCount[] {
    const time = this.now()
    const taken: PendingCount[] = []
    for (const entry of this.kept.values()) {
      const live = entry.resetAt > time
      if (entry.clear || live) taken.push(live ? entry : { ...entry, count: 0 })
    }
    this.kept.clear()
    this.voided = new Set()
    return taken
  }

  /**
   * Ends a carry: what Redis did not take is kept again, under what was kept meanwhile. A clear made since the take
   * (kept, or taken by Redis) voids what was taken for its key.
   */
  putBack(left: readonly PendingCount[]): void {
    const voided = this.voided
    this.voided = undefined
    for (const old of left) {
      if (voided?.has(old.key)) continue
      const newer = this.kept.get(old.key)
      if (newer?.clear) continue
      const entry = newer ?? this.entry(old.key)
      entry.count += old.count
      entry.resetAt = Math.max(entry.resetAt, old.resetAt)
      entry.clear = old.clear
    }
  }
}
