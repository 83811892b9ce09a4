import { useTokenStore } from '../oidc/token-store'
import { useGatewayConfig } from '../ops/config'
import { useLogger } from '../ops/logger'
import { startRevocations } from '../session/revocations'
import { startSessionIndex } from '../session/session-index-store'
import { startLoginLimits } from '../stores/login-limits'

let starting: Promise<void> | undefined
let ready = false

/**
 * Starts the stores once: the login limits' counters, the shared revocations, the per-user index of sessions and (APP_AUTH_KIND=oidc) the OpenID
 * sessions' tokens, in Redis when APP_REDIS_URL is set.
 * Resolves when both are connected, the counts made before carried into Redis and the revocations followed
 * (subscribed, every live one loaded); without Redis, at once. Until then /readyz answers 503 `starting`; what is counted or revoked meanwhile is kept and sent.
 */
export function startStores(): Promise<void> {
  const tokens = useGatewayConfig().config.kind === 'oidc' ? useTokenStore() : undefined
  starting ??= Promise.all([startLoginLimits(), startRevocations(), startSessionIndex(), tokens]).then(() => {
    ready = true
  }, (error: unknown) => {
    // Not ready, and said so: /readyz stays 503 `starting`.
    useLogger().error({ error: error instanceof Error ? error.message : String(error) }, 'không khởi động được kho Redis (APP_REDIS_URL).')
  })
  return starting
}

/** Whether the stores have started (see startStores). */
export function storesReady(): boolean {
  return ready
}
