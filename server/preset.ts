import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { EXPORT_THREAD_PACKAGES } from './core/ops/tracing'

const require = createRequire(import.meta.url)

/**
 * The layer's Nitro preset: Nitro's `node-server` with the gateway's own entry (server/node-server.ts), the one file
 * that makes the Node server. nuxt.config.ts selects it for a production build unless the app chose a preset of its
 * own (which must then be this one: the build says so).
 */
export default {
  extends: 'node-server',
  entry: fileURLToPath(new URL('./node-server.ts', import.meta.url)),
  // Loaded by path at run time (the tracing export thread): named to the trace, as resolved from the layer itself.
  externals: { traceInclude: Object.values(EXPORT_THREAD_PACKAGES).map(name => require.resolve(name)) },
}
