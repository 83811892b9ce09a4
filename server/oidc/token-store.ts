import { sessionEndsAt } from '../core/session/seal'
import { useGatewayConfig } from '../ops/config'
import { useLogger } from '../ops/logger'
import { connectRedis } from '../stores/redis'
import { redisTokenStore } from './redis-token-store'
import { cachedTokens, forgetTokens, remember, type TokenRecord, type TokenStore } from './token-cache'

/**
 * Where an OpenID session's tokens live: beside the session, never in the cookie (README, "Log in with OpenID
 * Connect"). In Redis when APP_REDIS_URL is set (redis-token-store.ts: shared by every instance, sealed with a key and
 * label of their own, so a record read out of Redis is no session cookie; gone at the session's 8-hour end), else in
 * this process's memory (one instance). Also the refresh lock that lets one instance at a time use a refresh token, and
 * the index a back-channel logout reads (the provider's `sub` and `sid`).
 */

const MAX_MEMORY_RECORDS = 100_000

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
    async lockHolder(sid) {
      return locks.has(sid) ? 'this instance' : 'none'
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
