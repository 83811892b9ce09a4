import { useLogger } from './logger'
import { startLoginLimits } from './login-limits'
import { startRevocations } from './revocations'

let starting: Promise<void> | undefined
let ready = false

/**
 * Starts the stores once: the login limits' counters and the shared revocations, in Redis when APP_REDIS_URL is set.
 * Resolves when both are connected and the revocations followed (subscribed, every live one loaded); without Redis,
 * at once. Until then /readyz answers 503 `starting`; what is counted or revoked meanwhile is kept and sent.
 */
export function startStores(): Promise<void> {
  starting ??= Promise.all([startLoginLimits(), startRevocations()]).then(() => {
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
