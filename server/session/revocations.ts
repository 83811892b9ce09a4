import { parseAnnouncement, RevocationSet, type RevocableSession, type Revocation } from '../core/session/revocations'
import { auditLine } from '../ops/audit'
import { useGatewayConfig } from '../ops/config'
import { workStarted } from '../ops/drain'
import { useLogger } from '../ops/logger'
import { useMetrics } from '../ops/metrics'
import { throttledWarning } from '../ops/throttled-warning'
import { OUTCOME_ATTRIBUTE, traced } from '../ops/tracing/spans'
import { connectRedis, withinBudget, type RedisClient } from '../stores/redis'
import { readJournal, removeJournal, writeJournal } from './revocation-journal'
import { CHANNEL, currentEpoch, readRevocations, ttlOf, writeRevocations } from './revocation-store'

/** Unwritten revocations are tried again this often while Redis is connected. */
const RETRY_MS = 1_000
/**
 * Revocations made here are written again when Redis comes back (or a Cluster's primaries change) if they are this
 * recent: a primary that acknowledged them may have died before its replica had them, and the replica promoted in its
 * place has the same epoch marker (docs/operations.md, Redis).
 */
const RECENT_MS = 60_000
/** Recent revocations kept for that at most (a flood of logouts keeps the newest). */
const RECENT_MAX = 10_000

const revoked = new RevocationSet()
let shared: { redis: RedisClient, subscriber: RedisClient } | undefined
/** The Redis epoch this instance last saw (undefined before its first connection). */
let knownEpoch: string | undefined
/** Revocations Redis has not taken yet (made during an outage, read from the journal, or written back). */
const pending: Revocation[] = []
/** Revocations this instance made lately, with when: written again after a failover. */
const recent: { at: number, revocation: Revocation }[] = []
/** While revocations are unwritten, a graceful shutdown waits for them (up to its timeout), as for a request. */
let pendingWork: (() => void) | undefined
let retryTimer: NodeJS.Timeout | undefined
/** The journal this start read, removed once Redis has everything in it. */
let journalRead: string | undefined
let redisDown = false
const warn = throttledWarning()

/** Writes revocations to Redis; returns those it could not take (said in a throttled warning). */
async function publish(redis: RedisClient, revocations: readonly Revocation[], announce: 'each' | 'batch' = 'each'): Promise<Revocation[]> {
  const { left, error } = await writeRevocations(redis, revocations, announce)
  if (error) warn(`Redis không nhận được thu hồi phiên (${error instanceof Error ? error.message : String(error)}): giữ cục bộ, gửi lại khi Redis trở lại.`)
  return left
}

/** The revocations made here within RECENT_MS (older ones forgotten). */
function recentRevocations(): Revocation[] {
  const since = Date.now() - RECENT_MS
  while (recent.length && (recent[0]!.at < since || recent.length > RECENT_MAX)) recent.shift()
  return recent.map(entry => entry.revocation)
}

function remember(revocation: Revocation): void {
  recent.push({ at: Date.now(), revocation })
  if (recent.length > RECENT_MAX || recent[0]!.at < Date.now() - RECENT_MS) recentRevocations()
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
  let loaded = 0
  await readRevocations(redis, (revocation) => {
    if (revoked.add(revocation)) loaded++
  })
  return loaded
}

/** Whether Redis lost its data since this instance last saw it (see the epoch marker in revocation-store.ts). */
async function redisLostData(redis: RedisClient): Promise<boolean> {
  const epoch = await currentEpoch(redis)
  const lost = knownEpoch !== undefined && epoch !== knownEpoch
  knownEpoch = epoch
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
  const { config: { redis: settings, revocationJournal }, redisCa } = useGatewayConfig()
  if (!settings) return
  if (revocationJournal) takeJournal(revocationJournal)
  const [redis, subscriber] = await Promise.all([connectRedis(settings, redisCa), connectRedis(settings, redisCa)])
  shared = { redis, subscriber }
  const onDown = (error?: unknown) => {
    redisDown = true
    warn(`Redis không dùng được cho thu hồi phiên (${error instanceof Error ? error.message : 'mất kết nối'}): thu hồi mới chỉ có hiệu lực trên máy này đến khi Redis trở lại.`)
  }
  redis.on('error', onDown)
  redis.on('close', () => onDown())
  subscriber.on('error', () => {}) // said once through `redis`
  subscriber.on('message', (_channel: string, text: string) => {
    for (const revocation of parseAnnouncement(text)) revoked.add(revocation)
  })
  let syncing = false
  let followedOnce = false
  let markFollowed: () => void = () => {}
  // Only a sync that went through marks it (a failed one leaves it to the next 'ready').
  const followed = new Promise<void>((resolve) => {
    markFollowed = resolve
  })
  /** `failover`: a Cluster's primaries changed (no 'ready' says so): this instance's recent revocations go again. */
  const resync = async (failover = false) => {
    if (syncing || redis.status !== 'ready' || subscriber.status !== 'ready') return
    syncing = true
    try {
      await subscriber.subscribe(CHANNEL)
      const lost = await redisLostData(redis)
      // Back from an outage or a failover: what the old primary acknowledged may not have reached the new one. Written
      // back a batch an announcement (what failed to be is kept, as a new one); then what was made here meanwhile.
      const again = lost ? revoked.live() : redisDown || failover ? recentRevocations() : []
      const notAgain = await publish(redis, again, 'batch')
      keepPending(notAgain)
      const sent = again.length - notAgain.length + await flushPending(redis)
      const loaded = await loadAll(redis)
      if (lost) useLogger().warn({ rewritten: again.length }, `Redis đã mất dữ liệu thu hồi phiên: ghi lại ${again.length} thu hồi còn hiệu lực.`)
      if (redisDown || (failover && again.length)) useLogger().warn({ sent, recent: lost ? undefined : again.length, loaded }, `Redis đã trở lại: gửi ${sent} thu hồi phiên chờ (gồm thu hồi ${RECENT_MS / 1000} giây gần đây), nhận ${loaded} thu hồi.`)
      redisDown = pending.length > 0
      followedOnce = true
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
  redis.on('ready', () => void resync())
  subscriber.on('ready', () => void resync())
  if (redis.isCluster) {
    // A primary replaced or a node gone: its acknowledged writes may be lost, and the subscriber may have moved to
    // another node (missing what was announced meanwhile). Again once the new subscription surely stands.
    const failedOver = () => {
      // The nodes found at start are no failover: the first sync reads everything anyway.
      if (!followedOnce) return
      void resync(true)
      setTimeout(() => void resync(true), 2 * RETRY_MS).unref()
    }
    redis.on('+node', failedOver)
    redis.on('-node', failedOver)
  }
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

/** A revocation, in a `revocation` span with tracing on (outcome: shared through Redis, pending for it, or local). */
function revoke(revocation: Revocation): Promise<void> {
  return traced('revocation', 'internal', { 'svc_gateway.revocation.kind': revocation.kind }, async (span) => {
    revoked.add(revocation)
    useMetrics()?.revocations.inc({ kind: revocation.kind })
    let unsent: Revocation[]
    // Before the start has connected Redis, as during an outage: kept, sent with the first sync.
    if (!shared) unsent = useGatewayConfig().config.redis ? [revocation] : []
    else {
      remember(revocation)
      unsent = redisDown ? [revocation] : await publish(shared.redis, [revocation])
    }
    keepPending(unsent)
    span?.setAttribute(OUTCOME_ATTRIBUTE, unsent.length ? 'pending' : shared ? 'shared' : 'local')
  })
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

/**
 * Whether the revocations' Redis connection answers a PING within the Redis budget (for /readyz): false while it is
 * reconnecting (a Sentinel failover under way); on a Cluster, whether the cluster says every slot is served.
 */
export async function pingRevocationsRedis(): Promise<boolean> {
  const redis = shared?.redis
  if (!redis || redis.status !== 'ready') return false
  try {
    if (redis.isCluster) return /cluster_state:ok/.test(String(await withinBudget(() => redis.cluster('INFO'), 'CLUSTER INFO')))
    await withinBudget(() => redis.ping(), 'PING')
    return true
  }
  catch {
    return false
  }
}
