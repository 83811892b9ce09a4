import { createHash, randomUUID } from 'node:crypto'
import { sealValue, sessionEndsAt, unsealValue, type SealKeys } from '../core/session/seal'
import { useGatewayConfig } from '../ops/config'
import { useLogger } from '../ops/logger'
import { failoverReplay } from '../stores/failover-replay'
import { connectRedis, withinBudget, type RedisClient } from '../stores/redis'
import { cachedTokens, forgetTokens, remember, type TokenRecord } from './token-cache'

/**
 * Where an OpenID session's tokens live: beside the session, never in the cookie (README, "Log in with OpenID
 * Connect"). In Redis when APP_REDIS_URL is set (shared by every instance, sealed with a key and label of their own, so
 * a record read out of Redis is no session cookie; gone at the session's 8-hour end), else in this process's memory (one instance). Also the refresh lock that lets one instance
 * at a time use a refresh token, and the index a back-channel logout reads (the provider's `sub` and `sid`).
 */

export interface TokenStore {
  get: (sid: string) => Promise<TokenRecord | undefined>
  /**
   * Keeps the record until `until` (ms since the epoch; the session's end) and indexes it. `renewed`: a renewal's
   * result (the provider may have rotated the refresh token already): when Redis does not take it, it is still written
   * once Redis answers again, and so is the refresh lock's release.
   */
  put: (record: TokenRecord, until: number, renewed?: boolean) => Promise<void>
  delete: (record: Pick<TokenRecord, 'sid' | 'sub' | 'providerSid'>) => Promise<void>
  /** Our session ids of a provider subject, or of one provider session. */
  sessionsOf: (by: { sub: string } | { providerSid: string }) => Promise<string[]>
  /** The refresh lock of a session: a release function, or undefined while another holder has it. */
  lock: (sid: string, ms: number) => Promise<(() => Promise<void>) | undefined>
  /** Whether someone holds the refresh lock of a session now. */
  locked: (sid: string) => Promise<boolean>
  /** Whether a back-channel logout token's `jti` is new (remembered until `until`). */
  firstUse: (jti: string, until: number) => Promise<boolean>
  /** Forgets a `jti` whose logout could not be carried out (the provider may send it again). */
  forgetUse: (jti: string) => Promise<void>
}

const MAX_MEMORY_RECORDS = 100_000

function isRecord(value: unknown): value is TokenRecord {
  const record = value as Partial<TokenRecord> | null
  return !!record && typeof record === 'object' && typeof record.sid === 'string' && typeof record.accessToken === 'string'
    && typeof record.expiresAt === 'number' && typeof record.generation === 'number' && typeof record.sub === 'string'
}

/** One process: maps, with the oldest records pushed out past MAX_MEMORY_RECORDS. */
export function memoryTokenStore(): TokenStore {
  const records = new Map<string, { record: TokenRecord, until: number }>()
  const bySub = new Map<string, Set<string>>()
  const byProviderSid = new Map<string, Set<string>>()
  const locks = new Set<string>()
  const used = new Map<string, number>()
  const index = (map: Map<string, Set<string>>, key: string | undefined, sid: string, add: boolean) => {
    if (!key) return
    const set = map.get(key) ?? new Set()
    if (add) map.set(key, set.add(sid))
    else if (set.delete(sid) && !set.size) map.delete(key)
  }
  const remove = (record: Pick<TokenRecord, 'sid' | 'sub' | 'providerSid'>) => {
    records.delete(record.sid)
    index(bySub, record.sub, record.sid, false)
    index(byProviderSid, record.providerSid, record.sid, false)
  }
  return {
    async get(sid) {
      const entry = records.get(sid)
      if (entry && entry.until <= Date.now()) remove(entry.record)
      return entry && entry.until > Date.now() ? entry.record : undefined
    },
    async put(record, until) {
      if (!records.has(record.sid) && records.size >= MAX_MEMORY_RECORDS) remove(records.values().next().value!.record)
      records.set(record.sid, { record, until })
      index(bySub, record.sub, record.sid, true)
      index(byProviderSid, record.providerSid, record.sid, true)
    },
    async delete(record) {
      remove(record)
    },
    async sessionsOf(by) {
      return [...('sub' in by ? bySub.get(by.sub) : byProviderSid.get(by.providerSid)) ?? []]
    },
    async lock(sid) {
      if (locks.has(sid)) return undefined
      locks.add(sid)
      return async () => {
        locks.delete(sid)
      }
    },
    async locked(sid) {
      return locks.has(sid)
    },
    async firstUse(jti, until) {
      const now = Date.now()
      for (const [key, end] of used) {
        if (end > now) break
        used.delete(key)
      }
      if (used.has(jti)) return false
      used.set(jti, until)
      return true
    },
    async forgetUse(jti) {
      used.delete(jti)
    },
  }
}

/** Redis keys: hashed where the value comes from the provider (any length, any characters). */
const hashed = (text: string) => createHash('sha256').update(text).digest('base64url')
const KEY = {
  record: (sid: string) => `svc:oidc:tokens:${sid}`,
  sub: (sub: string) => `svc:oidc:sub:${hashed(sub)}`,
  providerSid: (sid: string) => `svc:oidc:psid:${hashed(sid)}`,
  lock: (sid: string) => `svc:oidc:lock:${sid}`,
  jti: (jti: string) => `svc:oidc:jti:${hashed(jti)}`,
}
const RELEASE = 'if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end'

/** How long a write-back after a failover holds a session's refresh lock at most. */
const WRITE_BACK_LOCK_MS = 5_000

/**
 * Every instance: records sealed as their own kind (a Redis dump holds no token and no session), indexes as sets.
 * A failover must not lose a renewal: the provider rotated the refresh token, and a record with the old one, used by
 * any instance, is a replay that revokes the whole grant. So the records this store wrote in the last minute, and a
 * renewal's record or lock release Redis did not take, are written again when the connection comes back (a Sentinel
 * failover, a Cluster's nodes changed: stores/failover-replay.ts), under the session's refresh lock and only over an
 * older generation. The lock an interrupted renewal still holds (replicated to the new primary) keeps the other
 * instances waiting for that record rather than refreshing with the old refresh token.
 */
export function redisTokenStore(redis: RedisClient, sealKeys: SealKeys): TokenStore {
  const ttl = (until: number) => Math.max(1, until - Date.now())
  /** The refresh locks this process could not release (Redis down), or may hold unknowingly: their holder values, by session id. */
  const unreleased = new Map<string, string[]>()
  const held = (sid: string, holder: string) => unreleased.set(sid, [...new Set([...unreleased.get(sid) ?? [], holder])])
  const read = async (sid: string) => {
    const value = await withinBudget(() => redis.get(KEY.record(sid)), 'GET')
    const record = value ? unsealValue(value, sealKeys) : null
    return isRecord(record) && record.sid === sid ? record : undefined
  }
  // The record and its indexes are keys of different slots on Redis Cluster: one transaction per key, sent together.
  // Half done is harmless: an index naming a session without a record, or a record an index lacks until the next put.
  const write = async (record: TokenRecord, until: number) => {
    const ms = ttl(until)
    // An index lives as long as its longest session: a new set takes the TTL (NX), a longer one extends it (GT).
    const index = (key: string) => redis.multi().sadd(key, record.sid).pexpire(key, ms, 'NX').pexpire(key, ms, 'GT').exec()
    await withinBudget(() => Promise.all([
      index(KEY.sub(record.sub)),
      record.providerSid ? index(KEY.providerSid(record.providerSid)) : null,
      redis.set(KEY.record(record.sid), sealValue(record, sealKeys), 'PX', ms),
    ]), 'MULTI')
  }
  /**
   * Takes a session's lock (SET NX): whether it is ours. Unanswered is not refused: Redis may have taken it (an answer
   * late past our budget), or take it yet (a Cluster retries a command through its failover), and a lock nobody
   * releases keeps every instance waiting for this session: released once Redis answers, and again if it answers OK.
   */
  const takeLock = async (sid: string, holder: string, ms: number) => {
    const setting = redis.set(KEY.lock(sid), holder, 'PX', ms, 'NX')
    try {
      return await withinBudget(() => setting, 'SET') === 'OK'
    }
    catch (error) {
      releaseLater(sid, holder, ms)
      setting.then(answer => answer === 'OK' && releaseLater(sid, holder, ms), () => undefined)
      throw error
    }
  }
  const release = (sid: string, holder: string) => withinBudget(() => redis.eval(RELEASE, 1, KEY.lock(sid), holder), 'EVAL')
  /** Writes a kept record again unless Redis has a newer generation, then releases a lock left held. */
  const writeBack = async (sid: string, kept: { record?: TokenRecord, until: number }) => {
    const left = unreleased.get(sid)?.[0]
    if (kept.until <= Date.now()) {
      unreleased.delete(sid) // the session has ended: its lock expired long ago
      return
    }
    const holder = left ?? randomUUID()
    if (!left && kept.record) {
      // Someone else renewing now read the record before us: their result stands.
      if (!await takeLock(sid, holder, WRITE_BACK_LOCK_MS)) return
      // Ours until released below: a write-back that fails now (on a Cluster, the record's slot still without a
      // primary while the lock's answers) goes on under it next time, rather than finding it taken and giving up.
      held(sid, holder)
    }
    if (kept.record) {
      const stored = await read(sid)
      // Absent: lost with the old primary (a logout elsewhere revoked the session: the record is inert, gone at its end).
      if (!stored || stored.generation < kept.record.generation) await write(kept.record, kept.until)
    }
    const released = unreleased.get(sid) ?? []
    await Promise.all(released.map(holder => release(sid, holder)))
    // A lock left meanwhile (a renewal under way now) is released by the next write-back.
    const rest = (unreleased.get(sid) ?? []).filter(holder => !released.includes(holder))
    if (rest.length) unreleased.set(sid, rest)
    else unreleased.delete(sid)
  }
  const replay = failoverReplay<{ record?: TokenRecord, until: number }>(redis, writeBack)
  /** A lock of ours to release once Redis answers, after the session's record is written again if need be. */
  const releaseLater = (sid: string, holder: string, ms: number) => {
    held(sid, holder)
    replay.failed(sid, replay.kept(sid)?.value ?? { until: Date.now() + ms })
  }
  return {
    get: read,
    async put(record, until, renewed) {
      try {
        await write(record, until)
      }
      catch (error) {
        if (renewed) replay.failed(record.sid, { record, until })
        throw error
      }
      replay.written(record.sid, { record, until })
    },
    async delete(record) {
      replay.forget(record.sid)
      await withinBudget(() => Promise.all([
        redis.del(KEY.record(record.sid)),
        redis.srem(KEY.sub(record.sub), record.sid),
        record.providerSid ? redis.srem(KEY.providerSid(record.providerSid), record.sid) : null,
      ]), 'MULTI')
    },
    async sessionsOf(by) {
      return withinBudget(() => redis.smembers('sub' in by ? KEY.sub(by.sub) : KEY.providerSid(by.providerSid)), 'SMEMBERS')
    },
    async lock(sid, ms) {
      const holder = randomUUID()
      if (!await takeLock(sid, holder, ms)) return undefined
      return async () => {
        // A renewal whose record Redis did not take keeps the lock until the record is written back: on a Cluster the
        // lock is a key of another slot, whose primary may well answer, and the others must wait for that record
        // rather than refresh with the refresh token the provider has replaced.
        if (replay.kept(sid)?.unwritten) {
          held(sid, holder)
          return
        }
        try {
          await release(sid, holder)
        }
        catch {
          // Released once Redis answers, after the record is written again: until then the others wait for it.
          releaseLater(sid, holder, ms)
        }
      }
    },
    async locked(sid) {
      return await withinBudget(() => redis.exists(KEY.lock(sid)), 'EXISTS') === 1
    },
    async firstUse(jti, until) {
      return (await withinBudget(() => redis.set(KEY.jti(jti), '1', 'PX', ttl(until), 'NX'), 'SET')) === 'OK'
    },
    async forgetUse(jti) {
      await withinBudget(() => redis.del(KEY.jti(jti)), 'DEL')
    },
  }
}

let store: Promise<TokenStore> | undefined

/** The store of this process: Redis when APP_REDIS_URL is set, else memory. */
export function useTokenStore(): Promise<TokenStore> {
  store ??= (async () => {
    const { config, seals, redisCa } = useGatewayConfig()
    if (!config.redis) return memoryTokenStore()
    const redis = await connectRedis(config.redis, redisCa)
    redis.on('error', (error: Error) => useLogger().debug({ error: error.message }, 'redis (kho token OIDC)'))
    // Commands fail fast while the connection is not up (no offline queue): wait for it, as the other stores do.
    if (redis.status !== 'ready') await new Promise(resolve => redis.once('ready', resolve))
    return redisTokenStore(redis, seals.oidcTokens)
  })()
  return store
}

/** Keeps a new session's tokens (at the callback). */
export async function keepTokens(record: TokenRecord): Promise<void> {
  await (await useTokenStore()).put(record, sessionEndsAt(record))
  remember(record)
}

/** The record of a session: this process's copy, else the store's. */
export async function tokensOf(sid: string): Promise<TokenRecord | undefined> {
  return cachedTokens(sid) ?? (await useTokenStore()).get(sid)
}

/**
 * Drops a session's tokens from this process and from the store (a store that fails is logged: the session is revoked
 * anyway); the record they were, if any. Revoking the refresh token at the provider is the caller's choice (logout.ts).
 */
export async function discardTokens(sid: string): Promise<TokenRecord | undefined> {
  const record = await tokensOf(sid).catch(() => undefined)
  forgetTokens(sid)
  if (record) await (await useTokenStore()).delete(record).catch((error: Error) => useLogger().warn({ error: error.message }, 'không xoá được token OIDC trong Redis.'))
  return record
}
