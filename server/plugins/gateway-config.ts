import { defineNitroPlugin } from 'nitropack/runtime'
import { useGatewayConfig } from '../utils/gateway-config'

/**
 * Reads and checks the whole configuration at start: a missing or short APP_SESSION_SECRET (or any invalid APP_*
 * value) stops the production server with a message naming the variable.
 */
export default defineNitroPlugin(() => {
  useGatewayConfig()
})
