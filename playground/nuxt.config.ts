export default defineNuxtConfig({
  extends: ['..'],
  devtools: { enabled: false },
  app: { head: { htmlAttrs: { lang: 'vi' }, title: 'Đơn hàng nội bộ' } },
  css: ['~/assets/main.css'],
  // The app's own runtime config: NUXT_PUBLIC_APP_NAME still reaches it (the layer reads only its APP_* variables).
  runtimeConfig: { public: { appName: 'Quản lý đơn hàng' } },
  // The test of `nuxt dev` (test/integration/dev-server.test.ts) builds into a folder of its own, away from the
  // .nuxt that the other tests' builds and type checks use.
  buildDir: process.env.SVC_PLAYGROUND_BUILD_DIR || undefined,
  // A page rendered in the browser alone, as in an SPA app (ssr: false): the route guard runs there first.
  routeRules: { '/reports': { ssr: false } },
  compatibilityDate: '2026-01-01',
  // The app's own WebSocket routes (server/routes/_ws/): the gateway's /api/** tunnel stays the gateway's.
  nitro: { experimental: { websocket: true } },
})
