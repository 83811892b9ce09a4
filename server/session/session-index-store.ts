/**
 * Where the per-user index of live sessions lives (core/session/session-index.ts says what an entry is): in Redis when
 * APP_REDIS_URL is set (every instance lists and ends the same sessions), else in this process's memory. The index's
 * only Redis code is here. A user's entries are one hash (`svc:{u:<id>}:sessions`: one Cluster slot per user), a field
 * per session (`<sid>`: the entry as written at login) and its last-seen time (`<sid>:seen`); the hash expires 8 hours
 * after its newest login, with the last of its sessions. Nothing here runs per proxied request: a login writes, an
 * idle re-seal moves a last-seen time, the sessions routes read.
 */
import { parseIndexedSession, userIndexKey, type IndexedSession } from '../core/session/session-index'
import { SESSION_TTL_MS, type SessionPayload } from '../core/session/seal'
import { useGatewayConfig } from '../ops/config'
import { throttledWarning } from '../ops/throttled-warning'
import { connectRedis, withinBudget, type RedisClient } from '../stores/redis'

/** A user's entries, as a store keeps them. Every call may reject (Redis down or slow): the caller decides. */
export interface SessionIndexStore {
  /** Adds a new session's entry; answers every entry of its user, the new one included. */
  add: (userId: string, entry: IndexedSession) => Promise<IndexedSession[]>
  /** Moves a session's last-seen time, when it has an entry (never creates one). */
  seen: (userId: string, sid: string, seen: number) => Promise<void>
  /** Every entry of a user (live or not: the caller filters). */
  list: (userId: string) => Promise<IndexedSession[]>
  /** Drops entries. */
  remove: (userId: string, sids: readonly string[]) => Promise<void>
}

/** Users this process's memory keeps entries for at most; the least recently written go first. */
const MAX_MEMORY_USERS = 50_000

/** One process (no Redis configured): maps, bounded. */
export function memorySessionIndex(): SessionIndexStore {
  const users = new Map<string, Map<string, IndexedSession>>()
  return {
    async add(userId, entry) {
      const entries = users.get(userId) ?? new Map<string, IndexedSession>()
      users.delete(userId)
      users.set(userId, entries.set(entry.sid, entry))
      if (users.size > MAX_MEMORY_USERS) users.delete(users.keys().next().value!)
      return [...entries.values()]
    },
    async seen(userId, sid, seen) {
      const entry = users.get(userId)?.get(sid)
      if (entry && seen > entry.seen) entry.seen = seen
    },
    async list(userId) {
      return [...users.get(userId)?.values() ?? []]
    },
    async remove(userId, sids) {
      const entries = users.get(userId)
      for (const sid of sids) entries?.delete(sid)
      if (entries && !entries.size) users.delete(userId)
    },
  }
}

/** Moves `<sid>:seen` only while the session's entry exists: a re-seal of an unlisted session adds nothing. */
const SEEN_SCRIPT = `if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  local old = tonumber(redis.call('HGET', KEYS[1], ARGV[1] .. ':seen') or '0')
  if tonumber(ARGV[2]) > old then redis.call('HSET', KEYS[1], ARGV[1] .. ':seen', ARGV[2]) end
end
return 0`

/** The entries of a user's hash (HGETALL's answer): each `<sid>` field with its `<sid>:seen`. */
function entriesOf(fields: Record<string, string>): IndexedSession[] {
  const entries: IndexedSession[] = []
  for (const [field, text] of Object.entries(fields)) {
    if (field.endsWith(':seen')) continue
    const entry = parseIndexedSession(text)
    if (!entry || entry.sid !== field) continue
    const seen = Number(fields[`${field}:seen`])
    if (Number.isFinite(seen) && seen > entry.seen) entry.seen = seen
    entries.push(entry)
  }
  return entries
}

/** Shared by every instance: one connection of its own, on stores/redis.ts's rules (no queue, 0.5 s budget). */
export function redisSessionIndex(redis: RedisClient): SessionIndexStore {
  return {
    async add(userId, entry) {
      const key = userIndexKey(userId)
      // The new session ends last: the hash lives until its end (a margin for clocks), then goes with its last session.
      const answers = await withinBudget(() => redis.multi()
        .hset(key, entry.sid, JSON.stringify(entry))
        .pexpire(key, SESSION_TTL_MS + 60_000)
        .hgetall(key)
        .exec(), 'MULTI')
      const [error, fields] = answers?.[2] ?? [new Error('MULTI không trả lời')]
      if (error) throw error
      return entriesOf(fields as Record<string, string>)
    },
    async seen(userId, sid, seen) {
      await withinBudget(() => redis.eval(SEEN_SCRIPT, 1, userIndexKey(userId), sid, String(seen)), 'EVAL')
    },
    async list(userId) {
      return entriesOf(await withinBudget(() => redis.hgetall(userIndexKey(userId)), 'HGETALL'))
    },
    async remove(userId, sids) {
      if (sids.length) await withinBudget(() => redis.hdel(userIndexKey(userId), ...sids.flatMap(sid => [sid, `${sid}:seen`])), 'HDEL')
    },
  }
}

let store: Promise<{ index: SessionIndexStore, redis?: RedisClient }> | undefined
const warn = throttledWarning()

function connectIndex(): Promise<{ index: SessionIndexStore, redis?: RedisClient }> {
  store ??= (async () => {
    const { config, redisCa } = useGatewayConfig()
    if (!config.redis) return { index: memorySessionIndex() }
    const redis = await connectRedis(config.redis, redisCa)
    redis.on('error', (error: Error) => warn(`Redis không dùng được cho danh sách phiên đăng nhập (${error.message}).`))
    return { index: redisSessionIndex(redis), redis }
  })()
  return store
}

/** The index of this gateway: Redis when configured (APP_REDIS_*), else memory. Its calls fail at once while Redis is away. */
export async function useSessionIndex(): Promise<SessionIndexStore> {
  return (await connectIndex()).index
}

/** Connects the index at start; resolves once its Redis connection is ready (the server's readiness waits for it). */
export async function startSessionIndex(): Promise<void> {
  const { redis } = await connectIndex()
  if (redis && redis.status !== 'ready') await new Promise(resolve => redis.once('ready', resolve))
}

/**
 * Moves a session's last-seen time in its user's index (the idle timeout's re-seal: session/idle.ts's onResealed,
 * registered by the start plugin): in the background, never awaited; a store that does not answer leaves the older time (said in the log once a minute).
 */
export function noteSessionSeen(session: SessionPayload, seen: number): void {
  void useSessionIndex().then(index => index.seen(session.user.id, session.sid, seen)).catch((error: Error) => warn(`không cập nhật được lần dùng cuối của phiên (${error.message}).`))
}
