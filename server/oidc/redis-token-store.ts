import { createHash, randomUUID } from 'node:crypto'
import { sealValue, unsealValue, type SealKeys } from '../core/session/seal'
import { failoverReplay } from '../stores/failover-replay'
import { withinBudget, type RedisClient } from '../stores/redis'
import { isRecord, type TokenRecord, type TokenStore } from './token-cache'

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

/** A refresh lock's value: this process's mark, then the attempt's (a lock of this instance tells itself from another's). */
const INSTANCE = randomUUID()
const newHolder = () => `${INSTANCE}.${randomUUID()}`

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
  /** Lock requests that got no answer, by holder: until when they could still take the lock (their PX). */
  const mayLand = new Map<string, number>()
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
   * releases keeps every instance waiting for this session: released once Redis answers, again if it answers OK, and
   * each second while it could still land (writeBack).
   * Refused is not always someone else's: a Cluster sends a command again when its connection closed before the
   * answer (ioredis, through a failover or a node's restart), and when the first one was taken, the second finds our
   * own lock. So a refusal reads the lock: ours when it holds this attempt's value.
   */
  const takeLock = async (sid: string, holder: string, ms: number) => {
    const setting = redis.set(KEY.lock(sid), holder, 'PX', ms, 'NX')
    try {
      if (await withinBudget(() => setting, 'SET') === 'OK') return true
      return await withinBudget(() => redis.get(KEY.lock(sid)), 'GET') === holder
    }
    catch (error) {
      mayLand.set(holder, Date.now() + ms)
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
      unreleased.get(sid)?.forEach(holder => mayLand.delete(holder))
      unreleased.delete(sid) // the session has ended: its lock expired long ago
      return
    }
    const holder = left ?? newHolder()
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
    const answers = await Promise.all(released.map(holder => release(sid, holder)))
    // A lock request that got no answer may take the lock later still (a command ioredis had sent, carried out after
    // its timeout: a node slow in a failover); no one would release it, and every instance would wait it out. So it
    // is released again each second until it could no longer hold.
    const landing = released.filter((holder, n) => answers[n] === 0 && (mayLand.get(holder) ?? 0) > Date.now())
    for (const holder of released) if (!landing.includes(holder)) mayLand.delete(holder)
    // A lock left meanwhile (a renewal under way now) is released by the next write-back.
    const rest = [...landing, ...(unreleased.get(sid) ?? []).filter(holder => !released.includes(holder))]
    if (rest.length) unreleased.set(sid, rest)
    else unreleased.delete(sid)
    if (landing.length) replay.failed(sid, kept)
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
      const holder = newHolder()
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
    async lockHolder(sid) {
      const holder = await withinBudget(() => redis.get(KEY.lock(sid)), 'GET')
      return holder === null ? 'none' : holder.startsWith(`${INSTANCE}.`) ? 'this instance' : 'another instance'
    },
    async firstUse(jti, until) {
      return (await withinBudget(() => redis.set(KEY.jti(jti), '1', 'PX', ttl(until), 'NX'), 'SET')) === 'OK'
    },
    async forgetUse(jti) {
      await withinBudget(() => redis.del(KEY.jti(jti)), 'DEL')
    },
  }
}
