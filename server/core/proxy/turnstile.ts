/**
 * A turnstile: at most `size` holders at once; the others wait their turn in arrival order, each for at most
 * `waitMs`, then are refused. The proxy's backend connections (proxy/backend-pool.ts). Pure: timers only.
 */
interface Waiter {
  start: () => void
  timer: NodeJS.Timeout
  /** Left the queue (gave up, or its wait ran out). */
  gone: boolean
}

export class Turnstile {
  /** Holders now. */
  busy = 0
  /** Waiting now. */
  waiting = 0
  private readonly queue: Waiter[] = []

  constructor(readonly size: number, readonly waitMs: number) {}

  /** Enters at once when there is room (true; the holder leaves with release()), else false. */
  tryEnter(): boolean {
    if (this.busy >= this.size) return false
    this.busy++
    return true
  }

  /**
   * Runs `start` when there is room: at once while there is, else when a holder leaves, in arrival order. `refuse`
   * runs instead when no room came within `waitMs`. Returns what takes a waiter out of the queue (it gave up); once
   * `start` has run, the holder leaves with release().
   */
  admit(start: () => void, refuse: () => void): () => void {
    if (this.tryEnter()) {
      start()
      return stayed
    }
    const waiter: Waiter = {
      start,
      gone: false,
      timer: setTimeout(() => {
        leave()
        refuse()
      }, this.waitMs),
    }
    const leave = () => {
      if (waiter.gone) return
      waiter.gone = true
      clearTimeout(waiter.timer)
      this.waiting--
    }
    this.queue.push(waiter)
    this.waiting++
    return leave
  }

  /** A holder leaves: its place goes to the one that has waited longest, if any. */
  release(): void {
    this.busy--
    while (this.queue.length && this.busy < this.size) {
      const waiter = this.queue.shift()!
      if (waiter.gone) continue
      waiter.gone = true
      clearTimeout(waiter.timer)
      this.waiting--
      this.busy++
      waiter.start()
    }
  }
}

function stayed(): void {}
