import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gatewayRouteTable } from './server/core/http/route-table'
import { GATEWAY_DEFAULTS } from './server/core/config/defaults'
import { EXPORT_THREAD_PACKAGES } from './server/core/ops/tracing'
import { presetRefusal, prerenderedLoginRefusal, STATIC_REFUSAL } from './server/core/config/server-preset'
import gatewayPreset from './server/preset'
import type { Nitro } from 'nitropack'

const LAYER_DIR = dirname(fileURLToPath(import.meta.url))
/**
 * The packages the tracing export thread loads by file path at run time (server/ops/tracing/export-thread.ts), as
 * resolved from the layer: no import names them, so every server build names them to Nitro's file trace, which
 * copies them into the built server's node_modules.
 */
const layerRequire = createRequire(import.meta.url)
const EXPORT_THREAD_FILES = Object.values(EXPORT_THREAD_PACKAGES).map(name => layerRequire.resolve(name))
/** The layer's own /api/** catch-all (the proxy); every other route under /api belongs to the app and wins. */
const PROXY_ROUTE_FILE = join(LAYER_DIR, 'server/routes/api/[...path].ts')
/** The route guard (app/lib/route-guard.ts), registered under this name by its path, not found by a file's name. */
const ROUTE_GUARD = 'svc-auth-guard'
const ROUTE_GUARD_FILE = join(LAYER_DIR, 'app/lib/route-guard.ts')

/**
 * The modules the gateway's code reads from the build (server/http/route-decider.ts): the app's route rules that set
 * headers, and every route of Nitro's router. Made for the server's build and for the prerenderer's, its own Nitro.
 */
function addGatewayModules(nitro: Nitro): void {
  // The app's route rules that set headers: the proxy gives them to the answers of /api/** (server/proxy/api-proxy.ts).
  nitro.options.virtual['#svc-gateway/route-headers'] = () => {
    const rules = Object.entries(nitro.options.routeRules)
      .filter(([, rule]) => rule.headers && Object.keys(rule.headers).length)
      .map(([route, rule]) => ({ route, headers: rule.headers }))
    return `export default ${JSON.stringify(rules)}`
  }
  nitro.options.virtual['#svc-gateway/routes'] = () => {
    // Nitro adds the page renderer as '/**' for every method; a build without the proxy route fails here.
    const routes = gatewayRouteTable([...nitro.scannedHandlers, ...nitro.options.handlers], PROXY_ROUTE_FILE, !!nitro.options.renderer)
    return `export default ${JSON.stringify(routes)}`
  }
}

/**
 * svc-auth-gateway: a Nuxt layer. Every key under runtimeConfig.svcGateway is overridden at start by its APP_*
 * variable (auth.baseURL <- APP_AUTH_BASE_URL), read by the gateway itself (server/core/config/config.ts: overlayEnv): the
 * app's own settings, its NUXT_* variables included, are left as they are. Values are coerced and checked there too.
 */
export default defineNuxtConfig({
  modules: [
    // Types that must reach the app wherever the layer is installed (a .d.ts file inside node_modules is not part of
    // the app's type check): the page meta keys and the v-can directive.
    (_options, nuxt) => {
      nuxt.hook('prepare:types', ({ declarations }) => {
        declarations.push(`declare module '#app' {
  interface PageMeta {
    /** false makes the page public; every other page needs a session. */
    auth?: boolean
    /** Permission URIs the page needs (all of them). */
    permissions?: string[]
  }
}
declare module 'vue' {
  interface GlobalDirectives {
    /** Hides (or with .disable, disables) the element without the permission URI(s); .any: any of them is enough. */
    vCan: import('vue').Directive<HTMLElement, string | readonly string[], 'any' | 'disable'>
  }
}`)
      })
    },
    // The route guard. Nuxt finds route middleware by file name and lets an app's file replace a layer's of the same
    // name: an app's own app/middleware/auth.global.ts turned every page's protection off. The guard is registered
    // here instead, by its path, first among the global middleware; an app middleware that takes its name fails the
    // build (README: "What an app may replace").
    (_options, nuxt) => {
      nuxt.hook('app:resolve', (app) => {
        const clash = app.middleware.find(middleware => middleware.name === ROUTE_GUARD)
        if (clash) throw new Error(`svc-auth-gateway: ${clash.path} không thể thay route guard "${ROUTE_GUARD}" của gateway: hãy đặt tên khác cho middleware này.`)
        app.middleware.unshift({ name: ROUTE_GUARD, path: ROUTE_GUARD_FILE, global: true })
      })
    },
  ],
  runtimeConfig: {
    // Every default is written once, in server/core/config/defaults.ts.
    svcGateway: GATEWAY_DEFAULTS,
  },
  compatibilityDate: '2026-01-01',
  hooks: {
    // A production build runs on the gateway's own Node server (server/node-server.ts) through the layer's preset,
    // unless the app chose a preset (nitro.preset, NITRO_PRESET): nitro:init then checks that it is this one.
    // `nuxt dev` keeps Nitro's development server, with the gate as a middleware ahead of every route (the app's own
    // server middleware runs before it there) and the /api/** WebSocket tunnel on Nitro's WebSocket support (the
    // slower route).
    'nitro:config'(nitroConfig) {
      // `nuxt generate` makes files without a server: no login, no session, no /api/**.
      if (nitroConfig.static && !nitroConfig.dev) throw new Error(STATIC_REFUSAL)
      if (!nitroConfig.dev) nitroConfig.externals = { ...nitroConfig.externals, traceInclude: [...nitroConfig.externals?.traceInclude ?? [], ...EXPORT_THREAD_FILES] }
      if (nitroConfig.dev) {
        nitroConfig.handlers = [{ middleware: true, handler: join(LAYER_DIR, 'server/dev/gate.ts') }, ...nitroConfig.handlers ?? []]
        nitroConfig.experimental = { ...nitroConfig.experimental, websocket: true }
      }
      else if (!nitroConfig.preset && !process.env.NITRO_PRESET && !process.env.SERVER_PRESET) {
        nitroConfig.preset = join(LAYER_DIR, 'server/preset.ts')
      }
    },
    // The request gate (server/gate/gate.ts) decides as Nitro's router does, so it needs every route,
    // known at build time: the gateway's /api/** catch-all marked as the proxy.
    'nitro:init'(nitro) {
      if (!nitro.options.dev && nitro.options.preset !== 'nitro-prerender') {
        const refusal = presetRefusal(nitro.options.preset, nitro.options.entry, gatewayPreset.entry)
        if (refusal) throw new Error(refusal)
      }
      addGatewayModules(nitro)
      // Pages prerendered by route rules (public ones: the build has no session) are rendered by a Nitro of their own.
      nitro.hooks.hook('prerender:init', addGatewayModules)
      nitro.hooks.hook('prerender:generate', (route) => {
        const refusal = prerenderedLoginRefusal(route.route, route.contents, nitro.options.baseURL)
        if (refusal) route.error = Object.assign(new Error(refusal), { statusCode: 500, statusMessage: 'Internal Server Error' })
      })
    },
  },
})
