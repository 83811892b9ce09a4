/** Counting what is open per key, each key against its own limit (WebSocket tunnels per session and per client). Pure. */

/** A claim: the key, and how many may be open under it (0: no limit). */
export type SlotClaim = readonly [key: string, limit: number]

export class OpenSlots {
  private readonly open = new Map<string, number>()

  /**
   * One slot under every key, or none at all when any key is at its limit (undefined). The function returned gives
   * the slots back; calling it again does nothing. A key with nothing open holds no memory.
   */
  take(claims: readonly SlotClaim[]): (() => void) | undefined {
    if (claims.some(([key, limit]) => limit > 0 && (this.open.get(key) ?? 0) >= limit)) return undefined
    for (const [key] of claims) this.open.set(key, (this.open.get(key) ?? 0) + 1)
    let given = false
    return () => {
      if (given) return
      given = true
      for (const [key] of claims) {
        const left = (this.open.get(key) ?? 1) - 1
        if (left > 0) this.open.set(key, left)
        else this.open.delete(key)
      }
    }
  }

  /** Slots open under a key. */
  count(key: string): number {
    return this.open.get(key) ?? 0
  }

  /** Keys with anything open. */
  get size(): number {
    return this.open.size
  }
}
