import { defineNitroPlugin } from 'nitropack/runtime'
import { ConfigError } from '../core/config'
import { useGatewayConfig } from '../utils/gateway-config'
import { startLoginLimits } from '../utils/login-limits'
import { startRevocations } from '../utils/revocations'

/**
 * Reads and checks the whole configuration at start: a missing or short APP_SESSION_SECRET (or any invalid APP_*
 * value) stops the production server with a message naming the variable. Then the brute-force counters and the shared revocations start.
 */
export default defineNitroPlugin(() => {
  try {
    useGatewayConfig()
  }
  catch (error) {
    if (!(error instanceof ConfigError) || import.meta.dev) throw error
    console.error(`[svc-auth-gateway] cấu hình không hợp lệ: ${error.message}`)
    process.exit(1)
  }
  void startLoginLimits()
  void startRevocations()
})
