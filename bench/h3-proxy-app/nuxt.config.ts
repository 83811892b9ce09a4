// The obvious way to proxy in Nuxt: h3's proxyRequest in a catch-all route. A comparison anchor for `npm run bench`.
export default defineNuxtConfig({
  devtools: { enabled: false },
  runtimeConfig: { nitro: { envPrefix: 'APP_' }, target: 'http://127.0.0.1:4100' },
  compatibilityDate: '2026-01-01',
})
