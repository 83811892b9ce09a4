/** Whether a build's Nitro preset can host the gateway, decided at build time (nuxt.config.ts). Pure. */

/** A path without its extension: Nitro may hold the entry resolved to `.ts`, `.mjs` or without one. */
function withoutExtension(path: string): string {
  return path.replace(/\.[cm]?[jt]s$/, '')
}

/**
 * Undefined when the build's entry is the gateway's own server (the layer's preset, or a preset extending it), else
 * the message the build fails with: the gateway needs a Node server it makes itself (proxy fast path, WebSocket
 * upgrade, time limits, drain), which no other preset's entry gives.
 */
export function presetRefusal(preset: string, entry: string, gatewayEntry: string): string | undefined {
  if (withoutExtension(entry) === withoutExtension(gatewayEntry)) return undefined
  return `svc-auth-gateway cần máy chủ Node của chính nó (server/node-server.ts), preset Nitro "${preset}" không chạy được gateway. `
    + 'Bỏ nitro.preset (và NITRO_PRESET, SERVER_PRESET) để dùng preset của layer: node-server với entry của gateway.'
}

/**
 * The message `nuxt generate` fails with: files without a server cannot log anyone in, keep a session or proxy
 * /api/**. Public pages may still be prerendered (route rules `prerender: true`) in a build served by the gateway.
 */
export const STATIC_REFUSAL = 'svc-auth-gateway không chạy được dưới dạng trang tĩnh (nuxt generate): đăng nhập, phiên và /api/** cần máy chủ Node của gateway. '
  + 'Dùng nuxt build; trang công khai (definePageMeta({ auth: false })) vẫn prerender được bằng routeRules: { \'/about\': { prerender: true } }.'

/**
 * Undefined for a prerendered page that rendered, else why its prerender must fail: a page that sent the build (which
 * has no session) to the login page needs a session, and its file would send every visitor there, signed in or not.
 * `html` is what the prerenderer got: Nuxt answers a redirect of the server render with a `refresh` meta tag.
 */
export function prerenderedLoginRefusal(route: string, html: string | undefined, baseURL = '/'): string | undefined {
  const login = `${baseURL.replace(/\/+$/, '')}/auth/login`
  const refresh = /<meta http-equiv="refresh" content="0; url=([^"]*)"/.exec(html?.slice(0, 1024) ?? '')
  if (!refresh || !(refresh[1] === login || refresh[1]!.startsWith(`${login}?`))) return undefined
  return `svc-auth-gateway: trang ${route} cần đăng nhập, không prerender được (bản dựng không có phiên). `
    + 'Chỉ prerender trang công khai: definePageMeta({ auth: false }).'
}
