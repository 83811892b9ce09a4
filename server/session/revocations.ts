import { randomUUID } from 'node:crypto'
import { parseRevocation, RevocationSet, type RevocableSession, type Revocation } from '../core/session/revocations'
import { SESSION_TTL_MS } from '../core/session/seal'
import { auditLine } from '../ops/audit'
import { useGatewayConfig } from '../ops/config'
import { workStarted } from '../ops/drain'
import { useLogger } from '../ops/logger'
import { useMetrics } from '../ops/metrics'
import { throttledWarning } from '../ops/throttled-warning'
import { connectRedis, withinBudget, type RedisClient } from '../stores/redis'
import { readJournal, removeJournal, writeJournal } from './revocation-journal'

/** Redis keys of live revocations (expiring with the sessions they cover) and the channel that announces new ones. */
const KEY_PREFIX = 'svc:rev:'
const CHANNEL = 'svc:rev'
/**
 * A marker of what Redis holds: set once (random) by the first instance that finds it missing. An instance that
 * reconnects and finds another value, or none, talks to a Redis that lost its data (restarted without persistence,
 * flushed) and writes back every live revocation it holds.
 */
const EPOCH_KEY = 'svc:rev-epoch'
/** Revocations written to Redis in one round trip at most. */
const WRITE_BATCH = 200
/** Unwritten revocations are tried again this often while Redis is connected. */
const RETRY_MS = 1_000

const revoked = new RevocationSet()
let shared: { redis: RedisClient, subscriber: RedisClient } | undefined
/** The Redis epoch this instance last saw (undefined before its first connection). */
let knownEpoch: string | undefined
/** Revocations Redis has not taken yet (made during an outage, read from the journal, or written back). */
const pending: Revocation[] = []
/** While revocations are unwritten, a graceful shutdown waits for them (up to its timeout), as for a request. */
let pendingWork: (() => void) | undefined
let retryTimer: NodeJS.Timeout | undefined
/** The journal this start read, removed once Redis has everything in it. */
let journalRead: string | undefined
let redisDown = false
const warn = throttledWarning()

function keyOf(revocation: Revocation): string {
  return revocation.kind === 'session' ? `${KEY_PREFIX}s:${revocation.sid}` : `${KEY_PREFIX}u:${revocation.userId}`
}

/** Milliseconds a revocation must be kept: until the sessions it covers have ended. */
function ttlOf(revocation: Revocation): number {
  return (revocation.kind === 'session' ? revocation.iat : revocation.before) + SESSION_TTL_MS - Date.now()
}

/**
 * Writes revocations to Redis (each a key with its expiry, then an announcement), in batches; returns those Redis
 * could not take (every one from the first batch that failed on).
 */
async function publish(redis: RedisClient, revocations: readonly Revocation[]): Promise<Revocation[]> {
  const live = revocations.filter(revocation => ttlOf(revocation) > 0)
  for (let start = 0; start < live.length; start += WRITE_BATCH) {
    const batch = redis.multi()
    for (const revocation of live.slice(start, start + WRITE_BATCH)) {
      const text = JSON.stringify(revocation)
      batch.set(keyOf(revocation), text, 'PX', ttlOf(revocation)).publish(CHANNEL, text)
    }
    try {
      await withinBudget(() => batch.exec())
    }
    catch (error) {
      warn(`Redis không nhận được thu hồi phiên (${error instanceof Error ? error.message : String(error)}): giữ cục bộ, gửi lại khi Redis trở lại.`)
      return live.slice(start)
    }
  }
  return []
}

/** Keeps revocations to write; the first one starts a piece of work the graceful shutdown waits for. */
function keepPending(revocations: readonly Revocation[]): void {
  if (!revocations.length) return
  pending.push(...revocations)
  pendingWork ??= workStarted()
  retryTimer ??= setInterval(() => void retryPending(), RETRY_MS).unref()
}

let flushing: Promise<number> | undefined

/**
 * Writes what is pending (one flush at a time: a second caller shares the one under way); when nothing is left, the
 * shutdown need not wait and the journal read at start is done. Returns how many were written.
 */
function flushPending(redis: RedisClient): Promise<number> {
  flushing ??= (async () => {
    const waiting = pending.splice(0)
    const left = await publish(redis, waiting)
    pending.unshift(...left)
    if (!pending.length) settled()
    return waiting.length - left.length
  })().finally(() => {
    flushing = undefined
  })
  return flushing
}

function settled(): void {
  pendingWork?.()
  pendingWork = undefined
  clearInterval(retryTimer)
  retryTimer = undefined
  if (journalRead) {
    removeJournal(journalRead)
    journalRead = undefined
  }
}

/** A publish that failed while Redis stayed connected (a slow moment) is tried again, not left to the next outage. */
async function retryPending(): Promise<void> {
  if (!shared || shared.redis.status !== 'ready' || !pending.length) return
  await flushPending(shared.redis)
}

/** Loads every live revocation from Redis into memory (at start, and to catch up after an outage). */
async function loadAll(redis: RedisClient): Promise<number> {
  let cursor = '0'
  let loaded = 0
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${KEY_PREFIX}*`, 'COUNT', 1000)
    cursor = next
    if (keys.length) {
      for (const text of await redis.mget(...keys)) {
        const revocation = text ? parseRevocation(text) : undefined
        if (revocation && revoked.add(revocation)) loaded++
      }
    }
  } while (cursor !== '0')
  return loaded
}

/** Whether Redis lost its data since this instance last saw it (see EPOCH_KEY); marks a Redis that has no marker. */
async function redisLostData(redis: RedisClient): Promise<boolean> {
  let epoch = await redis.get(EPOCH_KEY)
  if (!epoch) {
    const fresh = randomUUID()
    epoch = (await redis.set(EPOCH_KEY, fresh, 'NX')) ? fresh : await redis.get(EPOCH_KEY)
  }
  const lost = knownEpoch !== undefined && epoch !== knownEpoch
  knownEpoch = epoch ?? undefined
  return lost
}

/** Takes in the journal a previous run of this instance left (APP_REVOCATION_JOURNAL): held here at once, sent to Redis. */
function takeJournal(path: string): void {
  const revocations = readJournal(path)
  if (!revocations) return
  for (const revocation of revocations) revoked.add(revocation)
  journalRead = path
  keepPending(revocations)
}

/**
 * Starts sharing revocations through Redis (APP_REDIS_URL): each time the subscriber is (re)connected it subscribes,
 * writes back every live revocation if Redis lost its data meanwhile, sends what was revoked here during the outage,
 * then loads every live revocation, so nothing announced during an outage is missed. A journal left by the last run
 * (APP_REVOCATION_JOURNAL) is read first. Without Redis, revocations hold within this process. Checking a request
 * never calls Redis. Resolves once the first sync went through (the server's readiness waits for it); a revocation
 * made before then is kept and sent with it.
 */
export function startRevocations(): Promise<void> {
  revocationsStarted ??= followRevocations()
  return revocationsStarted
}

let revocationsStarted: Promise<void> | undefined

async function followRevocations(): Promise<void> {
  const { redis: settings, revocationJournal } = useGatewayConfig().config
  if (!settings) return
  if (revocationJournal) takeJournal(revocationJournal)
  const [redis, subscriber] = await Promise.all([connectRedis(), connectRedis()])
  shared = { redis, subscriber }
  const onDown = (error?: unknown) => {
    redisDown = true
    warn(`Redis không dùng được cho thu hồi phiên (${error instanceof Error ? error.message : 'mất kết nối'}): thu hồi mới chỉ có hiệu lực trên máy này đến khi Redis trở lại.`)
  }
  redis.on('error', onDown)
  redis.on('close', () => onDown())
  subscriber.on('error', () => {}) // said once through `redis`
  subscriber.on('message', (_channel: string, text: string) => {
    const revocation = parseRevocation(text)
    if (revocation) revoked.add(revocation)
  })
  let syncing = false
  let markFollowed: () => void = () => {}
  // Only a sync that went through marks it (a failed one leaves it to the next 'ready').
  const followed = new Promise<void>((resolve) => {
    markFollowed = resolve
  })
  const resync = async () => {
    if (syncing || redis.status !== 'ready' || subscriber.status !== 'ready') return
    syncing = true
    try {
      await subscriber.subscribe(CHANNEL)
      const lost = await redisLostData(redis)
      const live = lost ? revoked.live() : []
      keepPending(live)
      const sent = await flushPending(redis)
      const loaded = await loadAll(redis)
      if (lost) useLogger().warn({ rewritten: live.length }, `Redis đã mất dữ liệu thu hồi phiên: ghi lại ${live.length} thu hồi còn hiệu lực.`)
      if (redisDown) useLogger().warn({ sent, loaded }, `Redis đã trở lại: gửi ${sent} thu hồi phiên chờ, nhận ${loaded} thu hồi.`)
      redisDown = pending.length > 0
      markFollowed()
    }
    catch (error) {
      onDown(error)
      // A command refused on a live connection (READONLY, NOPERM, MISCONF, a timeout) brings no new 'ready': tried
      // again, so the first sync (and the server's readiness) cannot stall on it.
      setTimeout(() => void resync(), RETRY_MS).unref()
    }
    finally {
      syncing = false
    }
  }
  redis.on('ready', resync)
  subscriber.on('ready', resync)
  void resync()
  // Hourly sweep even when nobody revokes: memory holds only revocations of sessions that could still be alive.
  setInterval(() => revoked.prune(true), 60 * 60_000).unref()
  // Resolved once Redis took the first sync: subscribed, what was waiting sent, every live revocation loaded.
  await followed
}

/**
 * At the process's end (graceful shutdown, after its drain): revocations Redis never took are written to the journal
 * (APP_REVOCATION_JOURNAL) for the next start of this instance, and each is said in an error-level audit line; a
 * logout is never lost silently.
 */
export function journalPendingRevocations(): void {
  const left = pending.filter(revocation => ttlOf(revocation) > 0)
  if (!left.length) return
  const { revocationJournal } = useGatewayConfig().config
  const journal = revocationJournal && writeJournal(revocationJournal, left) ? revocationJournal : null
  for (const revocation of left) {
    auditLine('revocation.unwritten', {
      kind: revocation.kind,
      userId: revocation.userId,
      issuedUpTo: revocation.kind === 'session' ? revocation.iat : revocation.before,
      journal,
    }, 'error')
  }
}

/** Whether a session has been revoked (logout, or its user's sessions revoked). A map lookup: no Redis call. */
export function isSessionRevoked(session: RevocableSession): boolean {
  return revoked.isRevoked(session)
}

async function revoke(revocation: Revocation): Promise<void> {
  revoked.add(revocation)
  useMetrics()?.revocations.inc({ kind: revocation.kind })
  // Before the start has connected Redis, as during an outage: kept, sent with the first sync.
  if (!shared) return useGatewayConfig().config.redis ? keepPending([revocation]) : undefined
  if (redisDown) return keepPending([revocation])
  keepPending(await publish(shared.redis, [revocation]))
}

/** Revokes one session until its 8-hour end, on every instance (within the process without Redis). */
export function revokeSession(session: RevocableSession): Promise<void> {
  return revoke({ kind: 'session', sid: session.sid, userId: session.user.id, iat: session.iat })
}

/**
 * Ends every session of a user issued before this call, on every instance: for the app's own server code (an
 * administrator disabling an account). Sessions issued afterwards are not touched.
 */
export function revokeUserSessions(userId: string): Promise<void> {
  auditLine('revocation', { kind: 'user', userId })
  return revoke({ kind: 'user', userId, before: Date.now() })
}

/** Whether the revocations' Redis connection answers a PING within the Redis budget (for /readyz). */
export async function pingRevocationsRedis(): Promise<boolean> {
  if (!shared || shared.redis.status !== 'ready') return false
  try {
    await withinBudget(() => shared!.redis.ping())
    return true
  }
  catch {
    return false
  }
}
