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
