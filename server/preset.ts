import { fileURLToPath } from 'node:url'

/**
 * The layer's Nitro preset: Nitro's `node-server` with the gateway's own entry (server/node-server.ts), the one file
 * that makes the Node server. nuxt.config.ts selects it for a production build unless the app chose a preset of its
 * own (which must then be this one: the build says so).
 */
export default {
  extends: 'node-server',
  entry: fileURLToPath(new URL('./node-server.ts', import.meta.url)),
}
