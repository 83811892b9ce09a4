import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { presetRefusal } from '../../server/core/config/server-preset'
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
