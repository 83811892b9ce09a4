import { formatMessage } from '../../shared/messages'
import { limitKey, MemoryRateLimitStore, rateLimitAddress, retryAfterSeconds, type LimitEntry, type RateLimitStore } from '../core/limits/rate-limit'
import { GatewayError, IamRefusal, MESSAGES } from '../http/errors'
import { useGatewayConfig } from '../ops/config'
import { connectRedis } from './redis'
import { RedisRateLimitStore } from './redis-rate-limit'

let store: Promise<RateLimitStore> | undefined
let started: Promise<void> | undefined

/**
 * Creates the counters once: in Redis when one is configured (APP_REDIS_*) (in memory while Redis does not answer, as during an
 * outage, and carried into Redis when it does), else in memory. The first attempt waits for the store, never for
 * Redis: no count is made anywhere else. Resolves once Redis is connected and holds what was counted before (the
 * server's readiness waits for it).
 */
export function startLoginLimits(): Promise<void> {
  started ??= (async () => {
    const { config: { redis, rateLimit }, redisCa } = useGatewayConfig()
    const local = new MemoryRateLimitStore(rateLimit.maxKeys)
    if (!redis) {
      store = Promise.resolve(local)
      return
    }
    const shared = connectRedis(redis, redisCa).then(client => new RedisRateLimitStore(client, local))
    // A client that cannot even be made (config.ts checks the URL first): the counters stay in memory.
    store = shared.catch(() => local)
    await (await shared).caughtUp
  })()
  return started
}

/** The counters (started on first use when the server has not started them: tests, internal calls). */
function useStore(): Promise<RateLimitStore> {
  void startLoginLimits()
  return store!
}

type AttemptOutcome = 'accepted' | 'refused' | 'other'

interface AttemptTicket {
  /** Ends the attempt: a refusal keeps its place; anything else gives it back; an accepted login clears (IP, user). */
  finish(outcome: AttemptOutcome, clearUser?: boolean): Promise<void>
}

/**
 * Reserves one attempt for (client IP, username) and for the client IP before any IAM call; over a limit: 429 with
 * Retry-After. Only IAM refusals end up counted.
 */
async function reserveAttempt(client: string, username: string): Promise<AttemptTicket> {
  const { perUser, perIp, windowSeconds } = useGatewayConfig().config.rateLimit
  // Counted by its address (IPv6 by its /64).
  const ip = rateLimitAddress(client)
  const userKey = limitKey('u', ip, username.normalize('NFKC').toLowerCase())
  const ipKey = limitKey('ip', ip)
  const entries: LimitEntry[] = [{ key: userKey, limit: perUser }, { key: ipKey, limit: perIp }]
  const result = await (await useStore()).reserve(entries, windowSeconds * 1000)
  if (!result.ok) {
    const seconds = retryAfterSeconds(result.retryAfterMs)
    throw new GatewayError(429, formatMessage(MESSAGES.tooManyAttempts, { seconds }), { 'retry-after': String(seconds) })
  }
  const reserved = entries.filter(entry => entry.limit > 0).map(entry => entry.key)
  return {
    async finish(outcome, clearUser = false) {
      if (outcome === 'refused') return
      await (await useStore()).release(reserved)
      if (outcome === 'accepted' && clearUser && perUser > 0) await (await useStore()).clear(userKey)
    },
  }
}

/**
 * Runs one IAM attempt under the brute-force limits: reserved before the call, kept only when the IAM refused
 * (envelope, HTTP 401/403). `clearUser`: an accepted attempt clears the (IP, username) count (login does, OTP send not).
 */
export async function limitAttempt<T>(client: string, username: string, clearUser: boolean, run: () => Promise<T>): Promise<T> {
  const ticket = await reserveAttempt(client, username)
  let result: T
  try {
    result = await run()
  }
  catch (error) {
    await ticket.finish(error instanceof IamRefusal ? 'refused' : 'other')
    throw error
  }
  await ticket.finish('accepted', clearUser)
  return result
}
