import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { PATTERN_CHUNK, patternChunk, patternSha256 } from '../../dev/pattern.mjs'
import { vi } from '../../shared/messages'
import { freePort, type RunningGateway } from '../support/gateway'
import { loginCookie } from '../support/login'
import { rawRequest } from '../support/raw-http'
import { useStack } from '../support/stack'

/**
 * `npm run dev` (`nuxt dev playground`): Nitro's development server stands in for the gateway's own (the gate as its
 * first middleware, the WebSocket tunnel on Nitro's WebSocket support). Login, /api/** and the tunnel keep working.
 */
const stack = useStack({ backend: 'ws' })
const root = fileURLToPath(new URL('../..', import.meta.url))
let dev: ChildProcess
let output = ''
let buildDir: string
let url: string

beforeAll(async () => {
  const port = await freePort()
  url = `http://127.0.0.1:${port}`
  // A build folder of its own: the other tests' builds and type checks use playground/.nuxt.
  buildDir = mkdtempSync(join(tmpdir(), 'svc-gateway-dev-'))
  dev = spawn(process.execPath, [join(root, 'node_modules/nuxt/bin/nuxt.mjs'), 'dev', 'playground', '--host', '127.0.0.1', '--port', String(port)], {
    cwd: root,
    env: { ...process.env, ...stack.env(), APP_SESSION_SECRET: 'dev-server-test-secret-of-at-least-32-chars', SVC_PLAYGROUND_BUILD_DIR: buildDir, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  dev.stdout!.on('data', (chunk) => {
    output += chunk
  })
  dev.stderr!.on('data', (chunk) => {
    output += chunk
  })
  // Ready once its server answers through the gate (the development build comes first).
  const deadline = Date.now() + 150_000
  for (;;) {
    if (dev.exitCode !== null) throw new Error(`nuxt dev exited (${dev.exitCode}):\n${output}`)
    if (Date.now() > deadline) throw new Error(`nuxt dev did not answer /healthz within 150 s:\n${output}`)
    const answer = await rawRequest(`${url}/healthz`).catch(() => undefined)
    if (answer?.status === 200) break
    await new Promise(resolve => setTimeout(resolve, 500))
  }
}, 180_000)

afterAll(async () => {
  if (dev && dev.exitCode === null) {
    const exited = new Promise(resolve => dev.once('exit', resolve))
    dev.kill('SIGTERM')
    const timer = setTimeout(() => dev.kill('SIGKILL'), 10_000)
    await exited
    clearTimeout(timer)
  }
  if (buildDir) rmSync(buildDir, { recursive: true, force: true })
})

describe('npm run dev', () => {
  it('logs in, proxies /api/** with the token, and keeps the gate\'s refusals', async () => {
    const cookie = await loginCookie({ url } as RunningGateway, 'sale', 'sale123')
    const session = await rawRequest(`${url}/auth/session`, { headers: { cookie } })
    expect(JSON.parse(session.body)).toMatchObject({ user: { id: 'u-sale', roles: ['sale'] } })

    const total = 4 * PATTERN_CHUNK
    const body = Buffer.concat([0, 1, 2, 3].map(index => patternChunk(index)))
    const upload = await fetch(`${url}/api/upload`, { method: 'POST', headers: { cookie, origin: url }, body })
    expect(upload.status).toBe(200)
    expect(upload.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    expect(await upload.json()).toEqual({ bytes: total, sha256: patternSha256(total) })

    const crossSite = await rawRequest(`${url}/api/upload`, { method: 'POST', headers: { 'origin': 'https://evil.example', 'sec-fetch-site': 'cross-site' }, body: 'x' })
    expect(crossSite.status).toBe(403)
    expect(JSON.parse(crossSite.body)).toMatchObject({ statusCode: 403, statusMessage: 'Yêu cầu khác nguồn gốc bị từ chối.' })
    const wrongMethod = await rawRequest(`${url}/auth/session`, { method: 'DELETE' })
    expect(wrongMethod.status).toBe(405)
  })

  it('tunnels a WebSocket under /api/** with the session\'s token, and refuses one from another origin', async () => {
    const cookie = await loginCookie({ url } as RunningGateway, 'sale', 'sale123')
    const before = stack.ws.handshakes.length
    const wsUrl = `${url.replace(/^http/, 'ws')}/api/live/echo`
    const ws = new WebSocket(wsUrl, { headers: { cookie, origin: url } })
    await new Promise((resolve, reject) => {
      ws.once('open', resolve)
      ws.once('error', reject)
    })
    const echoed = new Promise<string>(resolve => ws.once('message', data => resolve(String(data))))
    ws.send('xin chào')
    expect(await echoed).toBe('xin chào')
    const seen = stack.ws.handshakes[before]!
    expect(seen.url).toBe('/live/echo')
    expect(seen.headers.authorization).toMatch(/^Bearer dev\./)
    expect(seen.headers.cookie).toBeUndefined()
    const closed = new Promise(resolve => ws.once('close', resolve))
    ws.close()
    await closed

    const refused = new WebSocket(wsUrl, { headers: { origin: 'https://evil.example' } })
    const status = await new Promise<number | undefined>((resolve) => {
      refused.once('unexpected-response', (_req, res) => resolve(res.statusCode))
      refused.once('open', () => resolve(101))
      refused.once('error', () => resolve(undefined))
    })
    expect(status).toBe(403)
  })

  it('says nothing of plain http: its session cookie is not Secure, so a browser keeps it from any host', async () => {
    // A phone on the office network opens the developer's machine (Vite lets addresses through, not unknown names).
    const page = await rawRequest(`${url}/auth/login`, { headers: { host: '10.0.0.5:3000', accept: 'text/html' } })
    expect(page.status, page.body).toBe(200)
    expect(page.body).toContain('<h1 id="login-title"')
    expect(page.body).not.toContain(vi.errors.plainHttp)
    const login = await rawRequest(`${url}/auth/login`, { method: 'POST', headers: { 'host': '10.0.0.5:3000', 'content-type': 'application/json' }, body: JSON.stringify({ username: 'sale', password: 'sale123' }) })
    expect(login.status, login.body).toBe(200)
    expect((login.headers['set-cookie'] as string[]).find(line => line.startsWith('svc_session='))).not.toMatch(/Secure/)
    expect(output).not.toContain('APP_TRUST_PROXY')
  })
})
