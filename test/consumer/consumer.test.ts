import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSampleBackend } from '../../dev/backend.mjs'
import { startDevIam, USERS } from '../../dev/iam.mjs'
import { cookiePair, findSetCookie, startGateway, type RunningGateway } from '../helpers/gateway'
import { rawRequest } from '../helpers/raw-http'

/**
 * A product team's view: the layer packed as npm would publish it, installed into a fresh Nuxt app in a folder outside
 * the repository, built, started against the development IAM and the sample backend, and type-checked. This is what
 * the README's "Using the layer" says to do.
 */
const root = fileURLToPath(new URL('../..', import.meta.url))
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }
const npm = (args: string[], cwd: string) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 })

const APP_FILES: Record<string, string> = {
  'nuxt.config.ts': `export default defineNuxtConfig({
  extends: ['svc-auth-gateway'],
  runtimeConfig: { public: { appName: 'Ứng dụng mẫu' } },
  compatibilityDate: '2026-01-01',
})
`,
  'app/app.vue': `<template>
  <NuxtPage />
</template>
`,
  'app/pages/index.vue': `<script setup lang="ts">
import type { AuthUser } from 'svc-auth-gateway/types'

definePageMeta({ permissions: ['/orders/search'] })
const { user } = useAuth()
const { can } = usePermission()
const appName = useRuntimeConfig().public.appName
const shown: AuthUser | null = user.value
</script>

<template>
  <main>
    <h1>{{ appName }}</h1>
    <p data-testid="user">{{ shown?.name }}</p>
    <button v-can="'/orders/create'">Tạo đơn</button>
    <p v-if="can('/orders/search')">Xem đơn</p>
  </main>
</template>
`,
  'server/routes/api/health.get.ts': `export default defineEventHandler(() => ({ ok: true, servedBy: 'consumer' }))
`,
  // The app's own login page replaces the layer's (same path); it logs in through useAuth().login().
  'app/pages/auth/login.vue': `<script setup lang="ts">
definePageMeta({ auth: false })
const { login } = useAuth()
const failure = ref('')
async function submit() {
  try {
    await login({ username: 'sale', password: 'sale123' })
  }
  catch (error) {
    failure.value = AppError.from(error).message
  }
}
</script>

<template>
  <form data-testid="own-login" @submit.prevent="submit">
    <h1>Đăng nhập vào Ứng dụng mẫu</h1>
    <p>{{ failure }}</p>
  </form>
</template>
`,
}

/** A page whose two misuses must fail `nuxt typecheck`. */
const MISUSE_PAGE = `<script setup lang="ts">
definePageMeta({ permissions: 123 })
</script>

<template>
  <button v-can="123">x</button>
</template>
`

let work: string
let app: string
let iam: Awaited<ReturnType<typeof startDevIam>>
let backend: Awaited<ReturnType<typeof startSampleBackend>>
let gateway: RunningGateway

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'svc-auth-gateway-consumer-'))
  app = join(work, 'app')
  npm(['pack', '--pack-destination', work], root)
  const tarball = readdirSync(work).find(name => name.endsWith('.tgz'))!
  mkdirSync(app)
  writeFileSync(join(app, 'package.json'), JSON.stringify({
    name: 'consumer-app',
    private: true,
    type: 'module',
    dependencies: { 'nuxt': '4.4.5', 'svc-auth-gateway': `file:../${tarball}`, 'vue': '^3.5.0' },
    devDependencies: { 'typescript': '^6.0.0', 'vue-tsc': '^3.3.0' },
    overrides: { 'rollup': '4.67.4', 'unrs-resolver': '1.12.2' },
  }, null, 2))
  for (const [path, text] of Object.entries(APP_FILES)) {
    mkdirSync(join(app, path, '..'), { recursive: true })
    writeFileSync(join(app, path), text)
  }
  cpSync(join(root, 'playground/tsconfig.json'), join(app, 'tsconfig.json'))
  // Offline from npm's cache where it can (the repository's own install filled it).
  npm(['install', '--prefer-offline', '--no-audit', '--no-fund'], app)
  execFileSync(process.execPath, [join(app, 'node_modules/nuxt/bin/nuxt.mjs'), 'build'], { cwd: app, stdio: 'ignore', timeout: 300_000 })

  iam = await startDevIam()
  backend = await startSampleBackend({ iamUrl: iam.url })
  gateway = await startGateway({
    APP_AUTH_BASE_URL: iam.url,
    APP_API_PROXY_TARGET: backend.url,
    NUXT_PUBLIC_APP_NAME: 'Kho hàng miền Bắc',
  }, join(app, '.output/server/index.mjs'))
}, 900_000)

afterAll(async () => {
  await gateway?.stop()
  await backend?.close()
  await iam?.close()
  if (work) rmSync(work, { recursive: true, force: true })
})

describe('a fresh app that installs the packed layer', () => {
  it('packs only what runs', () => {
    const listing = JSON.parse(npm(['pack', '--dry-run', '--json'], root)) as Array<{ files: Array<{ path: string }>, version: string }>
    const paths = listing[0]!.files.map(file => file.path)
    expect(listing[0]!.version).toBe(version)
    expect(paths.filter(path => !/^(?:app|server|shared)\//.test(path)).sort()).toEqual(['LICENSE', 'README.md', 'nuxt.config.ts', 'package.json', 'types.ts'])
  })

  it('logs in, reads the session, calls the backend through /api, and keeps its own /api route', async () => {
    const login = await rawRequest(`${gateway.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'sale', password: 'sale123' }) })
    expect(login.status).toBe(200)
    expect(JSON.parse(login.body).user.name).toBe(USERS.sale!.fullName)
    const cookie = cookiePair((login.headers['set-cookie'] as string[]).find(line => line.startsWith('svc_session='))!)

    const session = JSON.parse((await rawRequest(`${gateway.url}/auth/session`, { headers: { cookie } })).body)
    expect(session.user.id).toBe('u-sale')
    expect(session.expiresAt).toEqual(expect.any(Number))

    const orders = await rawRequest(`${gateway.url}/api/orders`, { headers: { cookie } })
    expect(orders.status).toBe(200)
    expect(JSON.parse(orders.body).items.length).toBeGreaterThan(0)
    expect((await rawRequest(`${gateway.url}/api/orders`)).status).toBe(401)

    const own = await rawRequest(`${gateway.url}/api/health`)
    expect(JSON.parse(own.body)).toEqual({ ok: true, servedBy: 'consumer' })
  })

  it('sends a protected page to the login page without a session, and renders it with one (its NUXT_PUBLIC_* read)', async () => {
    const anonymous = await fetch(`${gateway.url}/`, { redirect: 'manual' })
    expect(anonymous.status).toBe(302)
    expect(anonymous.headers.get('location')).toBe('/auth/login?redirect=/')
    const login = await fetch(`${gateway.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'viewer', password: 'viewer123' }) })
    const page = await fetch(`${gateway.url}/`, { headers: { cookie: cookiePair(findSetCookie(login, 'svc_session')!) } })
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('<h1>Kho hàng miền Bắc</h1>')
    expect(html).toContain(USERS.viewer!.fullName)
    expect(html).toContain('<button style="display:none;">Tạo đơn</button>') // v-can hides it on the server render too
    expect(html).toContain('<p>Xem đơn</p>')
  })

  it('serves the app\'s own login page in place of the layer\'s', async () => {
    const page = await fetch(`${gateway.url}/auth/login?redirect=/`)
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('<h1>Đăng nhập vào Ứng dụng mẫu</h1>')
    expect(html).not.toContain('Dùng tài khoản của hệ thống định danh')
    // POST /auth/login stays the gateway's route.
    const login = await rawRequest(`${gateway.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'viewer', password: 'viewer123' }) })
    expect(login.status).toBe(200)
  })

  it('type-checks the app, and fails it for page meta and v-can misused', () => {
    const typecheck = () => spawnSync(process.execPath, [join(app, 'node_modules/nuxt/bin/nuxt.mjs'), 'typecheck'], { cwd: app, encoding: 'utf8', timeout: 300_000 })
    const clean = typecheck()
    expect(`${clean.stdout}${clean.stderr}`.split('\n').filter(line => /error TS\d+/.test(line))).toEqual([])
    expect(clean.status).toBe(0)
    writeFileSync(join(app, 'app/pages/misuse.vue'), MISUSE_PAGE)
    const misused = typecheck()
    const errors = `${misused.stdout}${misused.stderr}`.split('\n').filter(line => /error TS\d+/.test(line))
    expect(misused.status).not.toBe(0)
    expect(errors).toEqual([
      expect.stringMatching(/^app\/pages\/misuse\.vue\(2,\d+\): error TS2322: Type 'number' is not assignable to type 'string\[\]'\./),
      expect.stringMatching(/^app\/pages\/misuse\.vue\(6,\d+\): error TS2322: Type 'number' is not assignable to type 'string \| readonly string\[\]'\./),
    ])
  }, 600_000)
})
