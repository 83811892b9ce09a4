/**
 * Writes that must outlive a failover. Redis replicates asynchronously: a write the old primary acknowledged may be
 * missing on the replica promoted in its place, and a write made while no primary answers fails. A replay keeps each
 * write Redis acknowledged for RECENT_MS, and each one it did not take until it does; it redoes the failed ones every
 * second while connected, and every kept one each time the connection comes back (a Sentinel failover, a restart) or a
 * Cluster's nodes change. The caller's `redo` decides what writing again means (a check that nothing newer is there).
 */

/** Acknowledged writes are redone after a reconnection if they are this recent (as revocations, session/revocations.ts). */
const RECENT_MS = 60_000
const RETRY_MS = 1_000
/** Writes kept at most (a flood keeps the newest). */
const MAX_KEPT = 10_000
/** Writes redone together (each within the Redis budget). */
const PARALLEL = 50

export interface FailoverReplay<T> {
  /** A write Redis acknowledged: redone after a reconnection within RECENT_MS. */
  written: (key: string, value: T) => void
  /** A write Redis did not take (or an undo it must still see, such as a lock's release): redone until Redis takes it. */
  failed: (key: string, value: T) => void
  /** What is kept for a key (its value, whether Redis still has to take it). */
  kept: (key: string) => { value: T, unwritten: boolean } | undefined
  /** Forgets a key's write (deleted since: not to be written again). */
  forget: (key: string) => void
}

/** What a replay watches of a connection (redis.ts's RedisClient: a server, a Sentinel's primary or a Cluster). */
interface Connection {
  status: string
  isCluster?: boolean
  on: (event: 'close' | 'ready' | '+node' | '-node', listener: () => void) => unknown
}

interface Entry<T> {
  value: T
  at: number
  unwritten: boolean
}

/** A replay on a connection; `redo` writes a kept value again (throws when Redis did not take it: kept for later). */
export function failoverReplay<T>(redis: Connection, redo: (key: string, value: T) => Promise<void>): FailoverReplay<T> {
  const entries = new Map<string, Entry<T>>()
  let retryTimer: NodeJS.Timeout | undefined
  let wentDown = false
  let running: Promise<void> | undefined
  /** A replay asked for while one runs: run after it (true: every kept write). */
  let queued: boolean | undefined

  const keep = (key: string, entry: Entry<T>) => {
    // Deleted first: the map's order stays the order of the writes, oldest first.
    entries.delete(key)
    entries.set(key, entry)
    const since = Date.now() - RECENT_MS
    for (const [oldKey, old] of entries) {
      if (entries.size <= MAX_KEPT && (old.unwritten || old.at >= since)) break
      entries.delete(oldKey)
    }
    if (entry.unwritten) retryTimer ??= setInterval(() => void replay(false), RETRY_MS).unref()
  }

  /** Redoes the unwritten writes, and with `all` the recent acknowledged ones too; one run at a time. */
  const replay = (all: boolean): Promise<void> => {
    if (running) {
      queued = queued || all
      return running
    }
    running = (async () => {
      if (redis.status !== 'ready') return
      const since = Date.now() - RECENT_MS
      const due = [...entries].filter(([, entry]) => entry.unwritten || (all && entry.at >= since))
      for (let start = 0; start < due.length; start += PARALLEL) {
        await Promise.all(due.slice(start, start + PARALLEL).map(async ([key, entry]) => {
          try {
            await redo(key, entry.value)
            if (entries.get(key) === entry) entry.unwritten = false
          }
          catch {
            if (entries.get(key) === entry) entry.unwritten = true
          }
        }))
      }
      if (![...entries.values()].some(entry => entry.unwritten)) {
        clearInterval(retryTimer)
        retryTimer = undefined
      }
    })().finally(() => {
      running = undefined
      if (queued === undefined) return
      const again = queued
      queued = undefined
      void replay(again)
    })
    return running
  }

  redis.on('close', () => {
    wentDown = true
  })
  redis.on('ready', () => {
    if (!wentDown) return
    wentDown = false
    void replay(true)
  })
  if (redis.isCluster) {
    // A primary replaced or a slot moved brings no 'ready': the writes go again, and once more when the new
    // topology surely stands.
    const changed = () => {
      void replay(true)
      setTimeout(() => void replay(true), 2 * RETRY_MS).unref()
    }
    redis.on('+node', changed)
    redis.on('-node', changed)
  }

  return {
    written: (key, value) => keep(key, { value, at: Date.now(), unwritten: false }),
    failed: (key, value) => keep(key, { value, at: Date.now(), unwritten: true }),
    kept: (key) => {
      const entry = entries.get(key)
      return entry && { value: entry.value, unwritten: entry.unwritten }
    },
    forget: key => void entries.delete(key),
  }
}
