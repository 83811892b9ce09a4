/**
 * A small cache of cookie values already opened, so the hot paths (every /api call, every page load) skip AES-GCM
 * for a session they have seen. Only values that opened are kept; the 8-hour limit is checked again on every hit.
 * Pure.
 */
import { SESSION_TTL_MS, unsealSession, type SealKeys, type SessionPayload } from './seal'

export class SessionCache {
  /** Keyed by the GCM tag (the last part of the value): hashing 3.5 KB per request cost more than the rest of a lookup. */
  private readonly entries = new Map<string, { value: string, payload: SessionPayload, resealedAt?: number }>()
  /** Values answered from the cache, and values opened with AES-GCM (for the metrics). */
  hits = 0
  misses = 0

  /** Told of each payload opened with AES-GCM (a value new to this process), never of a cache hit. */
  onOpened: ((payload: SessionPayload) => void) | undefined

  constructor(private readonly sealKeys: SealKeys, private readonly maxEntries = 2048) {}

  /** The payload of a sealed value (see unsealSession), from the cache when this exact value was opened before. */
  open(value: string, now = Date.now()): SessionPayload | null {
    const key = value.slice(value.lastIndexOf('.') + 1)
    const cached = this.entries.get(key)
    if (cached && cached.value === value) {
      this.hits++
      if (now - cached.payload.iat < SESSION_TTL_MS) return cached.payload
      this.entries.delete(key)
      return null
    }
    this.misses++
    const payload = unsealSession(value, this.sealKeys, now)
    if (payload) {
      this.onOpened?.(payload)
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!)
      this.entries.set(key, { value, payload })
    }
    return payload
  }

  /**
   * Whether this process should re-seal this exact cookie value now: false when it already did within `withinMs`
   * (requests in flight together with one stale cookie get one new cookie between them, not one each). A value not
   * held (pushed out, or never opened here) may be re-sealed.
   */
  claimReseal(value: string, now: number, withinMs: number): boolean {
    const cached = this.entries.get(value.slice(value.lastIndexOf('.') + 1))
    if (!cached || cached.value !== value) return true
    if (cached.resealedAt !== undefined && now - cached.resealedAt < withinMs) return false
    cached.resealedAt = now
    return true
  }

  get size(): number {
    return this.entries.size
  }
}
