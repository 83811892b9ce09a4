/**
 * stores/: state shared by every instance through Redis: the connection (this file) and the brute-force limits'
 * counters (login-limits.ts, redis-rate-limit.ts: in memory while Redis is away, carried in when it is back). The
 * revocations and the OpenID token records keep their own Redis state in session/ and oidc/, on this connection's rules.
 * May import: core, ops, http.
 */
import type { Redis } from 'ioredis'
import { currentSpan, traced } from '../ops/tracing/spans'

/** A Redis call may cost a request at most this long; then local state serves. */
export const REDIS_BUDGET_MS = 500

/**
 * A Redis connection for the gateway: no offline queue (a request never waits for a Redis that is down), a short
 * command timeout, reconnection with back-off. Callers attach their own 'error' listener.
 */
export async function connectRedis(url: string): Promise<Redis> {
  const { Redis } = await import('ioredis')
  return new Redis(url, {
    enableOfflineQueue: false,
    commandTimeout: REDIS_BUDGET_MS,
    connectTimeout: 2_000,
    maxRetriesPerRequest: 0,
    // At most a second between attempts: a Redis that returns is used (and revocations written) within about that.
    retryStrategy: times => Math.min(times * 200, 1_000),
    lazyConnect: false,
  })
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
