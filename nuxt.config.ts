import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gatewayRouteTable } from './server/core/route-table'
import { presetRefusal } from './server/core/server-preset'
import gatewayPreset from './server/preset'

const LAYER_DIR = dirname(fileURLToPath(import.meta.url))
/** The layer's own /api/** catch-all (the proxy); every other route under /api belongs to the app and wins. */
const PROXY_ROUTE_FILE = join(LAYER_DIR, 'server/routes/api/[...path].ts')

/**
 * svc-auth-gateway: a Nuxt layer. Every key under runtimeConfig.svcGateway is overridden at start by its APP_*
 * variable (auth.baseURL <- APP_AUTH_BASE_URL), read by the gateway itself (server/core/config.ts: overlayEnv): the
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
  ],
  runtimeConfig: {
    svcGateway: {
      auth: {
        /** IAM base address; required unless mock. @default '' */
        baseURL: '',
        /** Mock mode: no IAM, any account. @default false */
        mock: false,
        /** Application code used when a login carries no clientId. @default '' */
        clientId: '',
        /** Seconds a successful GET /auth/clients answer is kept per process; 0 turns the cache off. @default 60 */
        clientsCacheSeconds: 60,
        /** Seconds each IAM call may take before 504. @default 10 */
        timeout: 10,
        endpoints: {
          /** @default '/auth/auth/login-v1' */
          login: '/auth/auth/login-v1',
          /** @default '/iam/user/userInfo' */
          userInfo: '/iam/user/userInfo',
          /** '' gives an empty list. @default '/iam/client/findAll?status=1' */
          clients: '/iam/client/findAll?status=1',
          /** '' disables OTP sending. @default '/auth/auth/login/request' */
          otpSend: '/auth/auth/login/request',
          /** Called (POST, raw token in `authorization`) at logout; '' turns it off. @default '' */
          logout: '',
        },
        mapping: {
          token: 'body.tokenData.access_token',
          expiresIn: 'body.tokenData.expires_in',
          id: 'body.userId',
          name: 'body.fullName',
          email: 'body.email',
          roles: 'body.listRole',
          permissions: 'body.authorization',
          roleKey: 'code',
          permissionKey: 'uri',
          /** '' disables the type filter. @default 'web' */
          permissionType: 'web',
          permissionTypeKey: 'type',
          clients: 'body',
          clientId: 'id',
          clientCode: 'code',
          clientName: 'name',
          transactionId: 'body.transactionId',
        },
        authenMethod: {
          /** @default 'AUTHENTICATOR' */
          authenticator: 'AUTHENTICATOR',
          /** @default 'MESSENGER' */
          messenger: 'MESSENGER',
        },
      },
      session: {
        /** At least 32 characters; required at start. */
        secret: '',
        /** Comma-separated old secrets, accepted for reading. @default '' */
        secretPrevious: '',
      },
      /** Backend address for /api/**. @default '' */
      apiProxyTarget: '',
      /** ms without a backend answer before 504. @default 60000 */
      apiProxyTimeout: 60000,
      /** Seconds the body of POST /auth/login or /auth/otp/send may take after its headers before 408. @default 10 */
      authBodyTimeout: 10,
      /** Comma-separated origins allowed to send unsafe cross-origin requests. @default '' */
      trustedOrigins: '',
      /** Number of reverse proxies in front (true = 1). @default false */
      trustProxy: false,
      rateLimit: {
        /** Failures per (IP, username) in the window; 0 turns it off. @default 5 */
        perUser: 5,
        /** Failures per IP in the window; 0 turns it off. @default 100 */
        perIp: 100,
        /** Window in seconds. @default 900 */
        window: 900,
        /** Counters kept in memory at most (about 300 bytes each); blocking ones are never pushed out. @default 100000 */
        maxKeys: 100000,
      },
      /** Redis for shared rate-limit counters and session revocations. @default '' */
      redisUrl: '',
      /** File (on a volume) for revocations Redis never took, read at the next start; '' turns it off. @default '' */
      revocationJournal: '',
      /** fatal, error, warn, info, debug, trace or silent. @default 'info' */
      logLevel: 'info',
      /** json (one JSON object per line) or pretty (for people). @default 'json' */
      logFormat: 'json',
      /** One log line per request. @default true */
      accessLog: true,
      /** Port of the Prometheus /metrics listener; '' turns it off. @default '' */
      metricsPort: '',
      /** Address the metrics listener binds: loopback until a deployment opens it (it has no authentication). @default '127.0.0.1' */
      metricsHost: '127.0.0.1',
      /** Seconds in-flight requests and streams get to finish after SIGTERM. @default 30 */
      shutdownTimeout: 30,
      /** WebSocket tunnels open at most per session (429 at the handshake beyond); 0: no limit. @default 32 */
      wsMaxPerSession: 32,
      /** WebSocket tunnels open at most per client address (429 at the handshake beyond); 0: no limit. @default 128 */
      wsMaxPerClient: 128,
      /**
       * Opt-in: keep one of Node's nextTick entries alive for the life of the process, so that an idle spell cannot
       * leave V8's nextTick literal on its slow path (README, Performance). Changes the whole process. @default false
       */
      keepTickShape: false,
    },
  },
  compatibilityDate: '2026-01-01',
  hooks: {
    // A production build runs on the gateway's own Node server (server/node-server.ts) through the layer's preset,
    // unless the app chose a preset (nitro.preset, NITRO_PRESET): nitro:init then checks that it is this one.
    // `nuxt dev` keeps Nitro's development server, with the gate as a middleware ahead of every route (the app's own
    // server middleware runs before it there) and the /api/** WebSocket tunnel on Nitro's WebSocket support (the
    // slower route).
    'nitro:config'(nitroConfig) {
      if (nitroConfig.dev) {
        nitroConfig.handlers = [{ middleware: true, handler: join(LAYER_DIR, 'server/dev/gate.ts') }, ...nitroConfig.handlers ?? []]
        nitroConfig.experimental = { ...nitroConfig.experimental, websocket: true }
      }
      else if (!nitroConfig.preset && !process.env.NITRO_PRESET && !process.env.SERVER_PRESET) {
        nitroConfig.preset = join(LAYER_DIR, 'server/preset.ts')
      }
    },
    // The request gate (server/lib/request-gate.ts) decides as Nitro's router does, so it needs every route,
    // known at build time: the gateway's /api/** catch-all marked as the proxy.
    'nitro:init'(nitro) {
      if (!nitro.options.dev && nitro.options.preset !== 'nitro-prerender') {
        const refusal = presetRefusal(nitro.options.preset, nitro.options.entry, gatewayPreset.entry)
        if (refusal) throw new Error(refusal)
      }
      nitro.options.virtual['#svc-gateway/routes'] = () => {
        // Nitro adds the page renderer as '/**' for every method; a build without the proxy route fails here.
        const routes = gatewayRouteTable([...nitro.scannedHandlers, ...nitro.options.handlers], PROXY_ROUTE_FILE, !!nitro.options.renderer)
        return `export default ${JSON.stringify(routes)}`
      }
    },
  },
})
