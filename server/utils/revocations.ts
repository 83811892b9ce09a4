import type { Redis } from 'ioredis'
import { RevocationSet, type RevocableSession, type Revocation } from '../core/revocations'
import { SESSION_TTL_MS } from '../core/seal'
import { audit } from './audit'
import { useGatewayConfig } from './gateway-config'
import { useLogger } from './logger'
import { useMetrics } from './metrics'
import { connectRedis, withinBudget } from './redis'
import { throttledWarning } from './throttled-warning'

/** Redis keys of live revocations (expiring with the sessions they cover) and the channel that announces new ones. */
const KEY_PREFIX = 'svc:rev:'
const CHANNEL = 'svc:rev'

const revoked = new RevocationSet()
let shared: { redis: Redis, subscriber: Redis } | undefined
/** Revocations made while Redis could not take them: written when it is back. */
const pending: Revocation[] = []
let redisDown = false
const warn = throttledWarning()

function keyOf(revocation: Revocation): string {
  return revocation.kind === 'session' ? `${KEY_PREFIX}s:${revocation.sid}` : `${KEY_PREFIX}u:${revocation.userId}`
}

/** Milliseconds a revocation must be kept: until the sessions it covers have ended. */
function ttlOf(revocation: Revocation): number {
  return (revocation.kind === 'session' ? revocation.iat : revocation.before) + SESSION_TTL_MS - Date.now()
}

function parseRevocation(text: string): Revocation | undefined {
  try {
    const value = JSON.parse(text) as Revocation
    if (value?.kind === 'session' && typeof value.sid === 'string' && typeof value.userId === 'string' && typeof value.iat === 'number') return value
    if (value?.kind === 'user' && typeof value.userId === 'string' && typeof value.before === 'number') return value
  }
  catch { /* not one of ours */ }
  return undefined
}

/** Writes one revocation to Redis (key with its expiry, then an announcement); false when Redis could not take it. */
async function publish(redis: Redis, revocation: Revocation): Promise<boolean> {
  const ttl = ttlOf(revocation)
  if (ttl <= 0) return true
  const text = JSON.stringify(revocation)
  try {
    await withinBudget(() => redis.multi().set(keyOf(revocation), text, 'PX', ttl).publish(CHANNEL, text).exec())
    return true
  }
  catch (error) {
    warn(`Redis không nhận được thu hồi phiên (${error instanceof Error ? error.message : String(error)}): giữ cục bộ, gửi lại khi Redis trở lại.`)
    return false
  }
}

/** Loads every live revocation from Redis into memory (at start, and to catch up after an outage). */
async function loadAll(redis: Redis): Promise<number> {
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

/** Revocations made here while Redis was away go to Redis now. */
async function flushPending(redis: Redis): Promise<number> {
  const waiting = pending.splice(0)
  for (const revocation of waiting) {
    if (!(await publish(redis, revocation))) pending.push(revocation)
  }
  return waiting.length - pending.length
}

/**
 * Starts sharing revocations through Redis (APP_REDIS_URL): each time the subscriber is (re)connected it subscribes,
 * then loads every live revocation, so nothing announced during an outage is missed; revocations made here meanwhile
 * are written when Redis is back. Without Redis, revocations hold within this process. Checking a request never
 * calls Redis.
 */
export async function startRevocations(): Promise<void> {
  const { redisUrl } = useGatewayConfig().config
  if (!redisUrl || shared) return
  const [redis, subscriber] = await Promise.all([connectRedis(redisUrl), connectRedis(redisUrl)])
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
  // Once both connections are ready (at start, or back after an outage): follow the channel, send what was revoked
  // here meanwhile, then load every live revocation, so nothing announced during the outage is missed.
  let syncing = false
  let markFollowed: () => void = () => {}
  const followed = new Promise<void>((resolve) => {
    markFollowed = resolve
  })
  const resync = async () => {
    if (syncing || redis.status !== 'ready' || subscriber.status !== 'ready') return
    syncing = true
    try {
      await subscriber.subscribe(CHANNEL)
      const sent = await flushPending(redis)
      const loaded = await loadAll(redis)
      if (redisDown) useLogger().warn({ sent, loaded }, `Redis đã trở lại: gửi ${sent} thu hồi phiên chờ, nhận ${loaded} thu hồi.`)
      redisDown = pending.length > 0
    }
    catch (error) {
      onDown(error)
    }
    finally {
      syncing = false
      markFollowed()
    }
  }
  redis.on('ready', resync)
  subscriber.on('ready', resync)
  void resync()
  // Start-up waits a little for the live revocations; a Redis that is down does not hold the server back.
  await Promise.race([followed, new Promise(resolve => setTimeout(resolve, 2_000).unref())])
  // Hourly sweep even when nobody revokes: memory holds only revocations of sessions that could still be alive.
  setInterval(() => revoked.prune(true), 60 * 60_000).unref()
}

/** Whether a session has been revoked (logout, or its user's sessions revoked). A map lookup: no Redis call. */
export function isSessionRevoked(session: RevocableSession): boolean {
  return revoked.isRevoked(session)
}

async function revoke(revocation: Revocation): Promise<void> {
  revoked.add(revocation)
  useMetrics()?.revocations.inc({ kind: revocation.kind })
  if (!shared) return
  if (redisDown || !(await publish(shared.redis, revocation))) pending.push(revocation)
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
  audit(undefined, 'revocation', { kind: 'user', userId })
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
