/**
 * stores/: state shared by every instance through Redis: the connection (this file) and the brute-force limits'
 * counters (login-limits.ts, redis-rate-limit.ts: in memory while Redis is away, carried in when it is back). The
 * revocations and the OpenID token records keep their own Redis state in session/ and oidc/, on this connection's rules.
 * May import: core, ops, http.
 */
import type { ConnectionOptions } from 'node:tls'
import type { Cluster, Redis, RedisOptions } from 'ioredis'
import type { RedisSettings } from '../core/config/types'
import { useGatewayConfig } from '../ops/config'

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
 * A Redis connection for the gateway: to `target` (a redis:// address, for tests and tools), or by default to the
 * configured one (APP_REDIS_*, with the CA of APP_REDIS_TLS_CA). Callers attach their own 'error' listener.
 */
export async function connectRedis(target?: string | RedisSettings): Promise<RedisClient> {
  const { Redis } = await import('ioredis')
  if (typeof target === 'string') return new Redis(target, COMMON)
  const settings = target ?? useGatewayConfig().config.redis
  if (!settings) throw new Error('APP_REDIS_URL chưa cấu hình')
  const options = nodeOptions(settings, target ? undefined : useGatewayConfig().redisCa)
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
      // Also listens for the sentinels' +switch-master: a failover is followed as soon as it is announced.
      failoverDetector: true,
      sentinelRetryStrategy: times => Math.min(times * 200, 1_000),
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

/** Runs a Redis call within REDIS_BUDGET_MS; rejects past it. */
export async function withinBudget<T>(call: () => Promise<T>): Promise<T> {
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
