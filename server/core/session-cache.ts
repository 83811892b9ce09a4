/**
 * A small cache of cookie values already opened, so the hot paths (every /api call, every page load) skip AES-GCM
 * for a session they have seen. Only values that opened are kept; the 8-hour limit is checked again on every hit.
 * Pure.
 */
import { SESSION_TTL_MS, unsealSession, type SealKeys, type SessionPayload } from './seal'

export class SessionCache {
  private readonly entries = new Map<string, SessionPayload>()

  constructor(private readonly sealKeys: SealKeys, private readonly maxEntries = 2048) {}

  /** The payload of a sealed value (see unsealSession), from the cache when it was opened before. */
  open(value: string, now = Date.now()): SessionPayload | null {
    const cached = this.entries.get(value)
    if (cached) {
      if (now - cached.iat < SESSION_TTL_MS) return cached
      this.entries.delete(value)
      return null
    }
    const payload = unsealSession(value, this.sealKeys, now)
    if (payload) {
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!)
      this.entries.set(value, payload)
    }
    return payload
  }

  get size(): number {
    return this.entries.size
  }
}
