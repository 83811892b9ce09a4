/**
 * stores/: state shared by every instance through Redis: the connection (this file) and the brute-force limits'
 * counters (login-limits.ts, redis-rate-limit.ts: in memory while Redis is away, carried in when it is back). The
 * revocations and the OpenID token records keep their own Redis state in session/ and oidc/, on this connection's rules.
 * May import: core, ops, http.
 */
import type { ConnectionOptions } from 'node:tls'
import type { Cluster, Redis, RedisOptions } from 'ioredis'
import type { RedisSettings } from '../core/config/types'
import { currentSpan, traced } from '../ops/tracing/spans'

/** A Redis call may cost a request at most this long; then local state serves. */
export const REDIS_BUDGET_MS = 500

/**
 * A connection to the gateway's Redis: one server, the primary a Sentinel names (followed through failovers), or a
 * Redis Cluster (each key sent to its slot's primary). Commands are the same on all three; the keys of one multi-key
 * command or script share a hash tag (docs/operations.md).
 */
export type RedisClient = Redis | Cluster

/** What every connection shares: no offline queue (a request never waits for a Redis that is down), short timeouts. */
const COMMON: RedisOptions = {
  enableOfflineQueue: false,
  commandTimeout: REDIS_BUDGET_MS,
  connectTimeout: 2_000,
  maxRetriesPerRequest: 0,
  // At most a second between attempts: a Redis that returns is used (and revocations written) within about that.
  retryStrategy: times => Math.min(times * 200, 1_000),
  lazyConnect: false,
}

/** The ioredis options of a topology but its nodes: the ACL user, TLS with the configured CA. */
function nodeOptions(settings: RedisSettings, ca: string | undefined): RedisOptions {
  const tls: ConnectionOptions | undefined = settings.tls ? (ca ? { ca } : {}) : undefined
  return {
    ...COMMON,
    ...(settings.username ? { username: settings.username } : {}),
    ...(settings.password ? { password: settings.password } : {}),
    ...(tls ? { tls } : {}),
  }
}

/**
 * A Redis connection for the gateway: to a redis:// address, or to the configured Redis (`config.redis`, with
 * `redisCa`, the certificates of APP_REDIS_TLS_CA, as ops/config.ts read them). Callers attach their own 'error' listener.
 */
export async function connectRedis(target: string | RedisSettings, ca?: string): Promise<RedisClient> {
  const { Redis } = await import('ioredis')
  if (typeof target === 'string') return new Redis(target, COMMON)
  const settings = target
  const options = nodeOptions(settings, ca)
  if (settings.kind === 'standalone') return new Redis(settings.url, options)
  if (settings.kind === 'sentinel') {
    return new Redis({
      ...options,
      sentinels: settings.sentinels,
      name: settings.name,
      db: settings.db,
      ...(settings.sentinelPassword ? { sentinelPassword: settings.sentinelPassword } : {}),
      ...(options.tls ? { enableTLSForSentinelMode: true, sentinelTLS: options.tls } : {}),
      sentinelCommandTimeout: REDIS_BUDGET_MS,
      sentinelRetryStrategy: times => Math.min(times * 200, 1_000),
      // A primary demoted while alive (a failover asked of the sentinels) refuses writes: ask the sentinels again.
      // (Not ioredis's failoverDetector: its disconnect during a reconnection ends the connection for good, 5.11.)
      reconnectOnError: error => error.message.startsWith('READONLY'),
    })
  }
  const { retryStrategy, enableOfflineQueue, ...perNode } = options
  return new Redis.Cluster(settings.nodes, {
    redisOptions: perNode,
    enableOfflineQueue,
    clusterRetryStrategy: retryStrategy,
    // A failover or a slot moved: ioredis asks again within the budget rather than failing the command.
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnMoved: 0,
    slotsRefreshTimeout: 2_000,
  })
}

/**
 * The part of a key Redis Cluster hashes to its slot: the text between the first `{` and the next `}` when not empty
 * (the key's hash tag), else the whole key. The keys of one multi-key command, transaction or script must share it.
 */
export function hashTag(key: string): string {
  const open = key.indexOf('{')
  const close = open < 0 ? -1 : key.indexOf('}', open + 1)
  return close > open + 1 ? key.slice(open + 1, close) : key
}

/**
 * Runs a Redis call within REDIS_BUDGET_MS; rejects past it. With tracing on, a call made under a span (a request's,
 * a renewal's) is a client span `redis <operation>` (the command or MULTI; never its keys or values).
 */
export function withinBudget<T>(call: () => Promise<T>, operation: string): Promise<T> {
  if (!currentSpan()) return raceBudget(call)
  return traced(`redis ${operation}`, 'client', { 'db.system.name': 'redis', 'db.operation.name': operation }, () => raceBudget(call))
}

async function raceBudget<T>(call: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      call(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`quá ${REDIS_BUDGET_MS} ms`)), REDIS_BUDGET_MS)
      }),
    ])
  }
  finally {
    clearTimeout(timer)
  }
}
