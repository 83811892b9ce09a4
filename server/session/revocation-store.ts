import { randomUUID } from 'node:crypto'
import { parseRevocation, type Revocation } from '../core/session/revocations'
import { SESSION_TTL_MS } from '../core/session/seal'
import { withinBudget, type RedisClient } from '../stores/redis'

/**
 * The revocations' Redis state (session/revocations.ts keeps the process's side): a key per live revocation, expiring
 * with the sessions it covers (`svc:rev:s:<sid>`, `svc:rev:u:<user id>`), the channel that announces each new one, and
 * the epoch marker. Every command takes one key (or none): on Redis Cluster each goes to its own slot's primary,
 * PUBLISH reaches every node's subscribers, and the keys are read node by node.
 */

const KEY_PREFIX = 'svc:rev:'
/** The channel every instance subscribes to. */
export const CHANNEL = 'svc:rev'
/**
 * A marker of what Redis holds: set once (random) by the first instance that finds it missing. An instance that
 * reconnects and finds another value, or none, talks to a Redis that lost its data (restarted without persistence,
 * flushed) and writes back every live revocation it holds.
 */
const EPOCH_KEY = 'svc:rev-epoch'
/** Revocations written to Redis in one round trip at most. */
const WRITE_BATCH = 200

function keyOf(revocation: Revocation): string {
  return revocation.kind === 'session' ? `${KEY_PREFIX}s:${revocation.sid}` : `${KEY_PREFIX}u:${revocation.userId}`
}

/** Milliseconds a revocation must be kept: until the sessions it covers have ended. */
export function ttlOf(revocation: Revocation): number {
  return (revocation.kind === 'session' ? revocation.iat : revocation.before) + SESSION_TTL_MS - Date.now()
}

/**
 * Writes revocations to Redis (each a key with its expiry, then an announcement), in batches; returns those Redis
 * could not take (every one from the first batch that failed on), with the reason. Writing one again is harmless:
 * the same value, the same end. `announce`: 'each' (a message a revocation: new ones, which instances of every
 * version read), or 'batch' (a message a batch, a JSON array: writing back what Redis lost or may have lost, where a
 * message each made every instance parse every revocation of every instance, thousands after a restart).
 */
export async function writeRevocations(redis: RedisClient, revocations: readonly Revocation[], announce: 'each' | 'batch' = 'each'): Promise<{ left: Revocation[], error?: unknown }> {
  const live = revocations.filter(revocation => ttlOf(revocation) > 0)
  for (let start = 0; start < live.length; start += WRITE_BATCH) {
    const batch = live.slice(start, start + WRITE_BATCH)
    try {
      await withinBudget(async () => {
        const texts = batch.map(revocation => JSON.stringify(revocation))
        await Promise.all(batch.map((revocation, n) => redis.set(keyOf(revocation), texts[n]!, 'PX', ttlOf(revocation))))
        // Announced once written: an instance that reads the key on the announcement finds it.
        if (announce === 'batch') await redis.publish(CHANNEL, `[${texts.join(',')}]`)
        else await Promise.all(texts.map(text => redis.publish(CHANNEL, text)))
      }, 'SET')
    }
    catch (error) {
      return { left: live.slice(start), error }
    }
  }
  return { left: [] }
}

/** Every live revocation in Redis, each handed to `take` (at start, and to catch up after an outage). */
export async function readRevocations(redis: RedisClient, take: (revocation: Revocation) => void): Promise<void> {
  // A Cluster's keys are spread over its primaries: each is scanned (SCAN, never KEYS, which blocks a server).
  const nodes = redis.isCluster ? (redis as import('ioredis').Cluster).nodes('master') : [redis as import('ioredis').Redis]
  for (const node of nodes) {
    let cursor = '0'
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${KEY_PREFIX}*`, 'COUNT', 1000)
      cursor = next
      if (!keys.length) continue
      // One GET per key (MGET takes keys of one slot only on a Cluster). A key moved to another node meanwhile answers
      // an error here and is skipped: its announcement reached this instance when it was made.
      const replies = await node.pipeline(keys.map(key => ['get', key])).exec() ?? []
      for (const [error, text] of replies) {
        const revocation = !error && typeof text === 'string' ? parseRevocation(text) : undefined
        if (revocation) take(revocation)
      }
    } while (cursor !== '0')
  }
}

/** The epoch marker Redis holds now, set (random) when it has none. */
export async function currentEpoch(redis: RedisClient): Promise<string | undefined> {
  const epoch = await redis.get(EPOCH_KEY)
  if (epoch) return epoch
  const fresh = randomUUID()
  return (await redis.set(EPOCH_KEY, fresh, 'NX')) ? fresh : (await redis.get(EPOCH_KEY)) ?? undefined
}
