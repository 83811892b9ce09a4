import { Agent } from 'undici'
import { Turnstile } from '../core/proxy/turnstile'
import { useGatewayConfig } from '../ops/config'
import { watchBackendPool } from '../ops/metrics'

/**
 * A backend's connections, shared by every proxied /api exchange to it: undici's keep-alive Agent with
 * APP_API_PROXY_CONNECTIONS connections, and a turnstile in front of it (an exchange holds a connection from its
 * dispatch to its end). With every connection busy, undici would queue a request for as long as the busy ones last
 * (its dispatch API cannot take a request back while it waits); through the turnstile a request waits its turn at
 * most APP_API_POOL_WAIT seconds, then the proxy refuses it (503 with Retry-After): never an endless hang.
 * APP_API_PROXY_TARGET has one (useBackendPool), and each route of the routes file one of its own (proxy/routes.ts):
 * a slow backend holds its own connections only.
 */
export interface BackendPool {
  agent: Agent
  turnstile: Turnstile
}

let pool: BackendPool | undefined

/** A pool of the configuration's size and wait (APP_API_PROXY_CONNECTIONS, APP_API_POOL_WAIT). */
export function createBackendPool(): BackendPool {
  const { connections, waitMs } = useGatewayConfig().config.apiPool
  return { agent: new Agent({ keepAliveTimeout: 30_000, connections }), turnstile: new Turnstile(connections, waitMs) }
}

/** APP_API_PROXY_TARGET's pool, made on first use; its state feeds the metrics and /readyz. */
export function useBackendPool(): BackendPool {
  if (!pool) {
    const made = createBackendPool()
    const { turnstile } = made
    pool = made
    watchBackendPool(() => ({ busy: turnstile.busy, waiting: turnstile.waiting, size: turnstile.size }))
  }
  return pool
}
