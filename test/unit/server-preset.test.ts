import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { prerenderedLoginRefusal, presetRefusal, STATIC_REFUSAL } from '../../server/core/config/server-preset'
import gatewayPreset from '../../server/preset'

const serverDir = fileURLToPath(new URL('../../server', import.meta.url))

describe('the gateway\'s own Node server', () => {
  it('is the entry of the layer\'s preset, which extends Nitro\'s node-server', () => {
    expect(gatewayPreset).toEqual({ extends: 'node-server', entry: join(serverDir, 'node-server.ts') })
  })

  it('lets a build through only when its entry is that server, whatever extension Nitro resolved it to', () => {
    const entry = join(serverDir, 'node-server.ts')
    expect(presetRefusal('node-server', entry, entry)).toBeUndefined()
    expect(presetRefusal('node-server', entry.replace(/\.ts$/, ''), entry)).toBeUndefined()
    expect(presetRefusal('node-server', entry.replace(/\.ts$/, '.mjs'), entry)).toBeUndefined()
    expect(presetRefusal('node-server', '/app/node_modules/nitropack/dist/presets/node/runtime/node-server', entry))
      .toBe('svc-auth-gateway cần máy chủ Node của chính nó (server/node-server.ts), preset Nitro "node-server" không chạy được gateway. '
        + 'Bỏ nitro.preset (và NITRO_PRESET, SERVER_PRESET) để dùng preset của layer: node-server với entry của gateway.')
    expect(presetRefusal('vercel', '/x/vercel.mjs', entry)).toContain('preset Nitro "vercel" không chạy được gateway')
  })

  it('refuses `nuxt generate`, saying why and what to do instead', () => {
    expect(STATIC_REFUSAL).toBe('svc-auth-gateway không chạy được dưới dạng trang tĩnh (nuxt generate): đăng nhập, phiên và /api/** cần máy chủ Node của gateway. '
      + 'Dùng nuxt build; trang công khai (definePageMeta({ auth: false })) vẫn prerender được bằng routeRules: { \'/about\': { prerender: true } }.')
  })

  it('fails the prerender of a page that sends the build to the login page, and of no other', () => {
    // What Nuxt answers for a redirect of the server render (nuxt/dist/app/composables/router.js).
    const redirect = (to: string) => `<!DOCTYPE html><html><head><meta http-equiv="refresh" content="0; url=${to}"></head></html>`
    const refusal = 'svc-auth-gateway: trang /orders cần đăng nhập, không prerender được (bản dựng không có phiên). Chỉ prerender trang công khai: definePageMeta({ auth: false }).'
    expect(prerenderedLoginRefusal('/orders', redirect('/auth/login?redirect=/orders'))).toBe(refusal)
    expect(prerenderedLoginRefusal('/orders', redirect('/auth/login'))).toBe(refusal)
    expect(prerenderedLoginRefusal('/orders', redirect('/base/auth/login?redirect=/orders'), '/base/')).toBe(refusal)
    expect(prerenderedLoginRefusal('/about', '<!DOCTYPE html><html><body><h1>Giới thiệu</h1></body></html>')).toBeUndefined()
    expect(prerenderedLoginRefusal('/old', redirect('/new'))).toBeUndefined()
    expect(prerenderedLoginRefusal('/x', redirect('/auth/login-help'))).toBeUndefined()
    expect(prerenderedLoginRefusal('/x', redirect('/auth/login?redirect=/x'), '/base/')).toBeUndefined()
    expect(prerenderedLoginRefusal('/robots.txt', undefined)).toBeUndefined()
  })

  it('is reached through no back door: server/ holds no socket.server read, diagnostics channel or NITRO_SHUTDOWN_* flag', () => {
    const files = readdirSync(serverDir, { recursive: true, encoding: 'utf8' }).filter(path => path.endsWith('.ts'))
    expect(files.length).toBeGreaterThan(40)
    const found = files.flatMap((path) => {
      const text = readFileSync(join(serverDir, path), 'utf8')
      return ['socket.server', 'diagnostics_channel', 'net.server.socket', 'NITRO_SHUTDOWN', 'prependListener(\'request\''].filter(word => text.includes(word)).map(word => `${path}: ${word}`)
    })
    expect(found).toEqual([])
  })
})
