import { execFileSync, spawn } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installRuntime, supportedMajors } from '../../.ci/runtime.mjs'
import { startSampleBackend } from '../../dev/backend.mjs'
import { startDevIam, USERS } from '../../dev/iam.mjs'
import { EXPORT_THREAD_PACKAGES } from '../../server/core/ops/tracing'
import { STATIC_REFUSAL } from '../../server/core/config/server-preset'
import { vi } from '../../shared/messages'
import { launchChromium } from '../support/browser'
import { dockerStages, imageNpmCache, runStage } from '../support/dockerfile'
import { cookiePair, findSetCookie, startGateway, type RunningGateway } from '../support/gateway'
import { postLogin, sessionCookieOf } from '../support/login'
import { rawRequest } from '../support/raw-http'

/**
 * A product team's view: the layer packed as npm would publish it, installed into a fresh Nuxt app in a folder outside
 * the repository, built, started against the development IAM and the sample backend, and type-checked. This is what
 * the README's "Using the layer" says to do.
 */
const root = fileURLToPath(new URL('../..', import.meta.url))
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }
const README = readFileSync(join(root, 'README.md'), 'utf8')
/**
 * Whether to run the Dockerfile's build stage as a script (a second npm ci and nuxt build of the app, a minute of two
 * cores): CI's runtime matrix does (.ci/matrix.mjs sets it for the newest line); npm test does not, to stay under six
 * minutes, and its deploy.test.ts holds the Dockerfile's stages and Node to the supported lines.
 */
const IMAGE = process.env.SVC_CONSUMER_IMAGE === '1'

/** A file of the README's examples, as written there: the code block under `<!-- consumer test: <path> -->`. */
function readmeFile(path: string): string {
  const marker = `<!-- consumer test: ${path} -->\n\`\`\``
  const at = README.indexOf(marker)
  if (at === -1) throw new Error(`README.md has no example marked <!-- consumer test: ${path} -->`)
  const code = README.indexOf('\n', at + marker.length) + 1
  return README.slice(code, README.indexOf('```\n', code))
}

interface Finished {
  status: number | null
  signal: NodeJS.Signals | null
  stdout: string
  /** Everything the command printed, stdout then stderr. */
  output: string
}

/**
 * Runs a command to its end without blocking the worker. TypeScript and consola write a coloured report when
 * FORCE_COLOR is set (to any value), whose lines no pattern below would match: colours are off (NO_COLOR wins).
 */
function command(file: string, args: string[], cwd: string, extraEnv: Record<string, string> = {}, timeoutMs = 300_000): Promise<Finished> {
  const { FORCE_COLOR: _forceColor, ...env } = process.env
  return new Promise((resolve) => {
    const child = spawn(file, args, { cwd, env: { ...env, ...extraEnv, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    child.on('close', (status, signal) => resolve({ status, signal, stdout, output: `${stdout}${stderr}` }))
  })
}

/** A command that must succeed (its stdout); its failure names it and shows all it printed. */
async function mustRun(file: string, args: string[], cwd: string): Promise<string> {
  const run = await command(file, args, cwd, runtime.env)
  if (run.status !== 0) throw new Error(`${[file, ...args].join(' ')} (in ${cwd}) ended with ${run.status ?? run.signal}:\n${run.output}`)
  return run.stdout
}

/**
 * The app's Node: the one that runs the tests when the layer supports it (npm's engine checks then speak of that Node:
 * the runtime matrix runs this file on each supported line), else the newest supported line, installed as CI installs
 * it (.ci/runtime.mjs), with its npm and its `bin` first on PATH for what the app's tools start.
 */
interface AppRuntime { node: string, npmCli: string, env: Record<string, string> }
const MACHINE_NPM_CLI = realpathSync(execFileSync('sh', ['-c', 'command -v npm']).toString().trim())
let runtime: AppRuntime = { node: process.execPath, npmCli: MACHINE_NPM_CLI, env: {} }
const npm = (args: string[], cwd: string) => mustRun(runtime.node, [runtime.npmCli, ...args], cwd)
const nuxt = (args: string[], env: Record<string, string> = {}) => command(runtime.node, [join(app, 'node_modules/nuxt/bin/nuxt.mjs'), ...args], app, { ...runtime.env, ...env })
/** The `error TSnnnn` lines of a type check's report. */
const typeErrors = (run: Finished) => run.output.split('\n').filter(line => /error TS\d+/.test(line))

const APP_FILES: Record<string, string> = {
  'nuxt.config.ts': `export default defineNuxtConfig({
  extends: ['svc-auth-gateway'],
  runtimeConfig: { public: { appName: 'Ứng dụng mẫu' } },
  // The issue's own example. In an app without nitropack of its own, Nuxt 4.4's fallback type for a route rule lists no
  // headers (a type gap of Nuxt's: Nitro applies them), hence the cast.
  routeRules: { '/api/**': { headers: { 'x-frame-options': 'DENY' } } as never, '/about': { prerender: true } },
  compatibilityDate: '2026-01-01',
})
`,
  // The README's examples, as written there: a page of its API, and an app.vue whose chrome leaves the login page bare.
  'app/app.vue': readmeFile('app/app.vue'),
  'app/pages/orders.vue': readmeFile('app/pages/orders.vue'),
  // The app's own middleware and plugin, named as the layer's guard and session plugin were or are: the guard stays.
  'app/middleware/auth.global.ts': `export default defineNuxtRouteMiddleware((to) => {
  if (import.meta.server) useRequestEvent()?.node.res.appendHeader('x-app-middleware', to.path)
})
`,
  'app/plugins/02.auth.ts': `export default defineNuxtPlugin(() => {
  if (import.meta.server) useRequestEvent()?.node.res.setHeader('x-app-plugin', '02.auth')
})
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
  // A public page prerendered at build time (route rule above): it knows the user once it runs in the browser. What it
  // asks of /api/** while it renders goes to the build's APP_API_PROXY_TARGET, without a session (the sample backend
  // answers 401 then).
  'app/pages/about.vue': `<script setup lang="ts">
definePageMeta({ auth: false })
const { user } = useAuth()
const { error } = await useFetch('/api/orders')
// The error's body as the backend sent it (its type is the route's: unknown to the app, typed here).
const refusal = computed(() => (error.value?.data as { message?: string } | undefined)?.message)
</script>

<template>
  <main>
    <h1>Giới thiệu</h1>
    <p data-testid="who">{{ user?.name ?? 'Khách' }}</p>
    <p data-testid="orders">{{ error?.statusCode ?? 200 }} {{ refusal }}</p>
  </main>
</template>
`,
  'server/routes/api/health.get.ts': `export default defineEventHandler(() => ({ ok: true, servedBy: 'consumer' }))
`,
  // Utils and a composable of the app named like the gateway's former internals: both keep working.
  'server/utils/names.ts': `export function useLogger() { return 'the app\\'s logger' }
export function useMetrics() { return 'the app\\'s metrics' }
export function useGatewayConfig() { return 'the app\\'s config' }
export const sessionCookie = 'the app\\'s cookie'
`,
  'server/routes/app-names.get.ts': `export default defineEventHandler(() => ({ logger: useLogger(), metrics: useMetrics(), config: useGatewayConfig(), cookie: sessionCookie }))
`,
  'app/composables/useAuthUser.ts': `export function useAuthUser() { return 'the app\\'s user' }
`,
  // The app's own login page replaces the layer's (same path); it logs in through useAuth().login(), and has no layout.
  'app/pages/auth/login.vue': `<script setup lang="ts">
definePageMeta({ auth: false, layout: false })
const { login } = useAuth()
const failure = ref('')
const hydrated = ref(false)
onMounted(() => (hydrated.value = true))
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
    <p data-testid="own-login-failure">{{ failure }}</p>
    <button type="submit" :disabled="!hydrated">Đăng nhập</button>
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
/**
 * The app's one type check, with a page of two misuses added: started once the build is done, while the HTTP tests run
 * (it only writes .nuxt). Its errors must be exactly the misuses': one vue-tsc run says both that the app's own files
 * check clean and that misuse fails (a second run would cost the suite half a minute of a core).
 */
let typeCheck: Promise<Finished>
/** What the app's `npm install` printed. */
let installOutput: string
/** The Dockerfile's build stage run in a copy of the app (started once the app is built), and the folder it ran in. */
let dockerBuild: Promise<string> | undefined
let image: string
let dockerRuntime: Awaited<ReturnType<typeof installRuntime>>

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'svc-auth-gateway-consumer-'))
  app = join(work, 'app')
  image = join(work, 'image')
  const supported = supportedMajors()
  if (!supported.includes(Number(process.versions.node.split('.')[0]))) {
    const newest = await installRuntime(supported.at(-1)!)
    runtime = { node: newest.node, npmCli: newest.npmCli, env: newest.env }
  }
  mkdirSync(app)
  // The README's way with a tarball: packed into the app's folder, installed from there (npm install ./<tarball>).
  await npm(['pack', '--pack-destination', app], root)
  const tarball = readdirSync(app).find(name => name.endsWith('.tgz'))!
  writeFileSync(join(app, 'package.json'), JSON.stringify({
    name: 'consumer-app',
    private: true,
    type: 'module',
    // SVC_CONSUMER_NUXT: another Nuxt for the app (the runtime matrix, .ci/matrix.mjs, runs the newest 4.x).
    dependencies: { 'nuxt': process.env.SVC_CONSUMER_NUXT ?? '4.4.5', 'svc-auth-gateway': `file:${tarball}`, 'vue': '^3.5.0' },
    // @types/node: an optional peer of the layer, for type checks only (README); the app's own, for the Node it runs on.
    devDependencies: { '@types/node': `^${execFileSync(runtime.node, ['-p', 'process.versions.node']).toString().split('.')[0]}`, 'typescript': '^6.0.0', 'vue-tsc': '^3.3.0' },
    overrides: { 'rollup': '4.67.4', 'unrs-resolver': '1.12.2' },
  }, null, 2))
  for (const [path, text] of Object.entries(APP_FILES)) {
    mkdirSync(join(app, path, '..'), { recursive: true })
    writeFileSync(join(app, path), text)
  }
  cpSync(join(root, 'playground/tsconfig.json'), join(app, 'tsconfig.json'))
  // What a team copies to build its image (Dockerfile's header).
  for (const file of ['Dockerfile', '.dockerignore']) cpSync(join(root, file), join(app, file))
  // Offline from npm's cache where it can (the repository's own install filled it); the IAM and backend meanwhile.
  ;[iam, installOutput] = await Promise.all([startDevIam(), command(runtime.node, [runtime.npmCli, 'install', '--prefer-offline', '--no-audit', '--no-fund'], app, runtime.env).then((run) => {
    if (run.status !== 0) throw new Error(`npm install (in ${app}) ended with ${run.status ?? run.signal}:\n${run.output}`)
    return run.output
  })])
  backend = await startSampleBackend({ iamUrl: iam.url })
  const build = await nuxt(['build'], { APP_API_PROXY_TARGET: backend.url })
  if (build.status !== 0) throw new Error(`nuxt build ended with ${build.status ?? build.signal}:\n${build.output}`)
  if (IMAGE) {
    // On the Node the Dockerfile names, whatever runs the tests; the context is the app as it is now (taken at once).
    const [stage] = dockerStages(readFileSync(join(app, 'Dockerfile'), 'utf8'))
    dockerRuntime = await installRuntime(/^node:(\d+)-/.exec(stage!.from)![1]!)
    mkdirSync(image)
    // The image's npm has no cache: the machine's would hand npm ci the layer's tarball without the file.
    const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as { packages: Record<string, { integrity?: string }> }
    const machineCache = (await mustRun(runtime.node, [runtime.npmCli, 'config', 'get', 'cache'], app)).trim()
    const npmCache = imageNpmCache(machineCache, join(work, 'image-npm-cache'), [lock.packages['node_modules/svc-auth-gateway']!.integrity!])
    dockerBuild = runStage(stage!, app, image, {}, { ...dockerRuntime.env, npm_config_cache: npmCache })
    dockerBuild.catch(() => undefined)
  }
  // After the image's context was taken: the image builds the app without the misuse page.
  writeFileSync(join(app, 'app/pages/misuse.vue'), MISUSE_PAGE)
  typeCheck = nuxt(['typecheck'])
  gateway = await startGateway({
    APP_AUTH_BASE_URL: iam.url,
    APP_API_PROXY_TARGET: backend.url,
    NUXT_PUBLIC_APP_NAME: 'Kho hàng miền Bắc',
  }, join(app, '.output/server/index.mjs'), undefined, runtime.node)
}, 900_000)

afterAll(async () => {
  await typeCheck?.catch(() => undefined)
  await dockerBuild?.catch(() => undefined)
  await gateway?.stop()
  await backend?.close()
  await iam?.close()
  if (work) rmSync(work, { recursive: true, force: true })
})

describe('a fresh app that installs the packed layer', () => {
  it('installs without an engine or peer warning about the layer, on the Node that runs it', () => {
    // npm's EBADENGINE and ERESOLVE (peer) warnings name the package they are about, line by line.
    expect(installOutput.split('\n').filter(line => /\bwarn\b/i.test(line) && line.includes('svc-auth-gateway'))).toEqual([])
  })

  it('packs only what runs', async () => {
    const listing = JSON.parse(await npm(['pack', '--dry-run', '--json'], root)) as Array<{ files: Array<{ path: string }>, version: string }>
    const paths = listing[0]!.files.map(file => file.path)
    expect(listing[0]!.version).toBe(version)
    expect(paths.filter(path => !/^(?:app|server|shared)\//.test(path)).sort()).toEqual(['LICENSE', 'README.md', 'bin/svc-auth-gateway.mjs', 'dev/iam.mjs', 'dev/oidc-provider.mjs', 'nuxt.config.ts', 'package.json', 'types.ts'])
  })

  it('prerenders its public page by a route rule and serves that file; in the browser the page then knows the user', async () => {
    const file = readFileSync(join(app, '.output/public/about/index.html'), 'utf8')
    expect(file).toContain('<h1>Giới thiệu</h1><p data-testid="who">Khách</p><p data-testid="orders">401 Chưa đăng nhập hoặc phiên đã hết hạn.</p>')
    const login = await fetch(`${gateway.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'viewer', password: 'viewer123' }) })
    const cookie = cookiePair(findSetCookie(login, 'svc_session')!)
    for (const headers of [{}, { cookie }]) {
      const page = await fetch(`${gateway.url}/about`, { headers })
      expect(page.status).toBe(200)
      expect(await page.text()).toBe(file)
    }
    const browser = await launchChromium()
    try {
      const page = await (await browser.newContext({ locale: 'vi-VN' })).newPage()
      await page.goto(`${gateway.url}/about`)
      // Logged in as a browser does (the cookie set by the answer), then the prerendered file again.
      expect(await page.evaluate(() => fetch('/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'viewer', password: 'viewer123' }) }).then(answer => answer.status))).toBe(200)
      await page.goto(`${gateway.url}/about`)
      await page.getByTestId('who').filter({ hasText: USERS.viewer!.fullName }).waitFor()
    }
    finally {
      await browser.close()
    }
  })

  it('logs in as the mock user of APP_AUTH_MOCK_USER (the README\'s example)', async () => {
    const mock = await startGateway({
      APP_AUTH_MOCK: 'true',
      APP_AUTH_MOCK_USER: '{"name":"Lê Kế Toán","roles":["accountant"],"permissions":["/invoices/search"]}',
      APP_API_PROXY_TARGET: backend.url,
    }, join(app, '.output/server/index.mjs'))
    try {
      const login = await rawRequest(`${mock.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'ketoan', password: 'x' }) })
      const user = { id: 'mock-user', name: 'Lê Kế Toán', email: 'ketoan@mock.local', roles: ['accountant'], permissions: ['/invoices/search'] }
      expect(JSON.parse(login.body)).toEqual({ user })
      const cookie = cookiePair((login.headers['set-cookie'] as string[]).find(line => line.startsWith('svc_session='))!)
      expect(JSON.parse((await rawRequest(`${mock.url}/auth/session`, { headers: { cookie } })).body)).toEqual({ user, expiresAt: expect.any(Number) })
      // The app's index page needs /orders/search, which this user lacks.
      expect((await rawRequest(`${mock.url}/`, { headers: { cookie } })).status).toBe(403)
    }
    finally {
      await mock.stop()
    }
  })

  it('answers /readyz 503 naming a required variable that is missing, said at start too', async () => {
    expect(JSON.parse((await rawRequest(`${gateway.url}/readyz`)).body)).toMatchObject({ status: 'ready', checks: { config: 'ok' } })
    const lacking = await startGateway({ APP_AUTH_BASE_URL: iam.url }, join(app, '.output/server/index.mjs'))
    try {
      const ready = await rawRequest(`${lacking.url}/readyz`)
      expect(ready.status).toBe(503)
      expect(JSON.parse(ready.body)).toMatchObject({ status: 'not ready', checks: { config: { missing: ['APP_API_PROXY_TARGET'] } } })
      expect(lacking.stdout()).toContain('"missing":"APP_API_PROXY_TARGET"')
    }
    finally {
      await lacking.stop()
    }
  })

  it('runs the development IAM from the package (npx svc-auth-gateway dev-iam); dev-oidc says what it needs', async () => {
    const bin = join(app, 'node_modules/.bin/svc-auth-gateway')
    const devIam = spawn(process.execPath, [bin, 'dev-iam', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] })
    try {
      let printed = ''
      devIam.stdout.on('data', (chunk) => {
        printed += chunk
      })
      await expect.poll(() => printed, { timeout: 20_000 }).toMatch(/Development IAM {3}http:\/\/127\.0\.0\.1:\d+\n/)
      const url = /Development IAM {3}(\S+)/.exec(printed)![1]!
      expect(printed).toContain(`APP_AUTH_BASE_URL=${url} APP_API_PROXY_TARGET=<your backend> npx nuxt dev`)
      const login = await fetch(`${url}/auth/auth/login-v1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'sale', password: 'sale123' }) })
      expect((await login.json()).code).toBe('API000')
    }
    finally {
      devIam.kill()
    }
    const devOidc = await command(process.execPath, [bin, 'dev-oidc', '--port', '0'], app)
    expect({ status: devOidc.status, output: devOidc.output.trim() }).toEqual({ status: 1, output: 'dev-oidc needs the package oidc-provider in your app: npm install --save-dev oidc-provider' })
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
    // The app's routeRules headers for /api/** reach proxied answers too.
    expect(orders.headers['x-frame-options']).toBe('DENY')
    expect(JSON.parse(orders.body).items.length).toBeGreaterThan(0)
    expect((await rawRequest(`${gateway.url}/api/orders`)).status).toBe(401)

    const own = await rawRequest(`${gateway.url}/api/health`)
    expect(JSON.parse(own.body)).toEqual({ ok: true, servedBy: 'consumer' })
    // The app's utils named like the gateway's former internals are the app's, and the gateway above kept working.
    const names = await rawRequest(`${gateway.url}/app-names`)
    expect(JSON.parse(names.body)).toEqual({ logger: 'the app\'s logger', metrics: 'the app\'s metrics', config: 'the app\'s config', cookie: 'the app\'s cookie' })
  })

  it('holds in its build the OpenTelemetry packages the tracing export thread loads by path (no import names them)', () => {
    for (const name of Object.values(EXPORT_THREAD_PACKAGES)) expect(existsSync(join(app, '.output/server/node_modules', name, 'package.json')), name).toBe(true)
  })

  it('adds to the app\'s auto-imports exactly the names of the README\'s API table, on the server and the client', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8')
    const table = readme.slice(readme.indexOf('### API'), readme.indexOf('\n## ', readme.indexOf('### API')))
    const rows = [...table.matchAll(/^\| `([^`]+)` \| ([^|]+?) \|/gm)].map(([, name, kind]) => ({ name: name!, kind: kind! }))
    const documented = (kinds: string[]) => rows.filter(row => kinds.includes(row.kind)).map(row => row.name).sort()
    /** Names a generated declaration file imports from the installed layer. */
    const fromLayer = (file: string, pattern: RegExp) => [...new Set([...readFileSync(join(app, '.nuxt', file), 'utf8').matchAll(pattern)].map(match => match[1]!))].sort()
    const layerPath = String.raw`[^']*node_modules/svc-auth-gateway/[^']*`
    expect(fromLayer('types/nitro-imports.d.ts', new RegExp(String.raw`const (\w+): typeof import\('${layerPath}'\)`, 'g'))).toEqual(documented(['server util']))
    expect(fromLayer('types/imports.d.ts', new RegExp(String.raw`const (\w+): typeof import\('${layerPath}'\)`, 'g'))).toEqual(documented(['client composable', 'client util']))
    expect(fromLayer('components.d.ts', new RegExp(String.raw`export const (\w+): typeof import\("[^"]*node_modules/svc-auth-gateway/[^"]*"\)`, 'g'))).toEqual(documented(['component']))
    expect(documented(['server util'])).toEqual(['endSession', 'listUserSessions', 'onProxyRequest', 'readGatewaySession', 'revokeUserSessions'])
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

  it('keeps pages protected with an app file app/middleware/auth.global.ts: the guard runs first, the app\'s middleware after it', async () => {
    const anonymous = await fetch(`${gateway.url}/orders`, { redirect: 'manual' })
    expect(anonymous.status).toBe(302)
    expect(anonymous.headers.get('location')).toBe('/auth/login?redirect=/orders')
    // The app's middleware saw the login page the guard sent the browser to, never the protected page.
    expect(anonymous.headers.get('x-app-middleware')).toBe('/auth/login')
    const cookie = sessionCookieOf(await postLogin(gateway, { username: 'viewer', password: 'viewer123' }))
    const page = await fetch(`${gateway.url}/orders`, { headers: { cookie } })
    expect(page.status).toBe(200)
    // The app's own middleware and its plugin named 02.auth ran too; the layer's 02.auth knew the user.
    expect(page.headers.get('x-app-middleware')).toBe('/orders')
    expect(page.headers.get('x-app-plugin')).toBe('02.auth')
    expect(await page.text()).toContain(USERS.viewer!.fullName)
  })

  it('renders the README\'s page: its orders from /api/orders come with the server render\'s payload, so the browser does not fetch them again', async () => {
    const cookie = sessionCookieOf(await postLogin(gateway, { username: 'sale', password: 'sale123' }))
    const page = await fetch(`${gateway.url}/orders`, { headers: { cookie } })
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('<li>Công ty TNHH Minh Phát</li>')
    const payload = /<script type="application\/json"[^>]* id="__NUXT_DATA__">([^<]*)<\/script>/.exec(html)?.[1]
    expect(payload).toContain('Công ty TNHH Minh Phát')
  })

  it('renders the app\'s pages in the chrome of the README\'s app.vue, and its login page bare', async () => {
    const cookie = sessionCookieOf(await postLogin(gateway, { username: 'sale', password: 'sale123' }))
    expect(await (await fetch(`${gateway.url}/orders`, { headers: { cookie } })).text()).toContain('<header class="app-header">Ứng dụng mẫu</header>')
    const login = await (await fetch(`${gateway.url}/auth/login`)).text()
    expect(login).toContain('<h1>Đăng nhập vào Ứng dụng mẫu</h1>')
    expect(login).not.toContain('app-header')
  })

  it('says why on a login over plain http to a host that is not the browser\'s own machine (its own login page, through useAuth().login())', async () => {
    // Chromium resolves staging.test to the gateway's loopback address: an http origin that is not the browser's own machine.
    const browser = await launchChromium(['--host-resolver-rules=MAP staging.test 127.0.0.1'])
    try {
      const page = await browser.newPage()
      await page.goto(`http://staging.test:${gateway.port}/auth/login`)
      await page.locator('button[type=submit]:not([disabled])').click()
      await expect.poll(() => page.getByTestId('own-login-failure').textContent()).toBe(vi.errors.plainHttp)
      expect(new URL(page.url()).pathname).toBe('/auth/login')
    }
    finally {
      await browser.close()
    }
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

  it('type-checks the app: its own files clean, and page meta and v-can misused fail it', async () => {
    const misused = await typeCheck
    // vue-tsc's exit code for diagnostics: a kill (status null, a signal) is no verdict.
    expect({ status: misused.status, signal: misused.signal }, misused.output).toEqual({ status: 2, signal: null })
    expect(typeErrors(misused), misused.output).toEqual([
      expect.stringMatching(/^app\/pages\/misuse\.vue\(2,\d+\): error TS2322: Type 'number' is not assignable to type 'string\[\]'\./),
      expect.stringMatching(/^app\/pages\/misuse\.vue\(6,\d+\): error TS2322: Type 'number' is not assignable to type 'string \| readonly string\[\]'\./),
    ])
  }, 600_000)

  // CI's runtime matrix runs it (SVC_CONSUMER_IMAGE=1, .ci/matrix.mjs on the newest line); npm test does not (above).
  it.runIf(IMAGE)('builds the app\'s image as the Dockerfile says, on the Node it names: npm ci finds the layer\'s tarball, and the run stage\'s output serves alone', async () => {
    await dockerBuild
    // The run stage: the build stage's output copied into a fresh WORKDIR (no node_modules above it), started there.
    const run = dockerStages(readFileSync(join(app, 'Dockerfile'), 'utf8'))[1]!
    const workdir = run.instructions.find(instruction => instruction.op === 'WORKDIR')!.args
    const [from, to] = run.instructions.find(instruction => instruction.op === 'COPY')!.args.split(/\s+/).filter(word => !word.startsWith('--'))
    const served = join(work, 'run', workdir, to!)
    cpSync(join(image, from!), served, { recursive: true })
    const container = await startGateway({ APP_AUTH_BASE_URL: iam.url, APP_API_PROXY_TARGET: backend.url }, join(served, 'server/index.mjs'), undefined, dockerRuntime.node)
    try {
      const login = await rawRequest(`${container.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'sale', password: 'sale123' }) })
      expect(login.status).toBe(200)
      const cookie = cookiePair((login.headers['set-cookie'] as string[]).find(line => line.startsWith('svc_session='))!)
      expect((await rawRequest(`${container.url}/api/orders`, { headers: { cookie } })).status).toBe(200)
      expect(JSON.parse((await rawRequest(`${container.url}/api/health`)).body)).toEqual({ ok: true, servedBy: 'consumer' })
    }
    finally {
      await container.stop()
    }
  }, 900_000)

  // Last: the builds write .nuxt (the type checks above are done with it).
  it('refuses `nuxt generate`, saying why', async () => {
    const generate = await nuxt(['generate'])
    expect(generate.status, generate.output).not.toBe(0)
    expect(generate.output).toContain(STATIC_REFUSAL)
  }, 300_000)

  // After the type checks: a build writes .nuxt (this one stops before it writes .output, which the gateway runs from).
  it('refuses to build an app whose middleware takes the route guard\'s name, saying why', async () => {
    const clash = join(app, 'app/middleware/svc-auth-guard.ts')
    writeFileSync(clash, 'export default defineNuxtRouteMiddleware(() => {})\n')
    try {
      const build = await nuxt(['build'])
      expect(build.status, build.output).not.toBe(0)
      expect(build.output).toContain(`svc-auth-gateway: ${clash} không thể thay route guard "svc-auth-guard" của gateway`)
    }
    finally {
      rmSync(clash)
    }
  }, 300_000)

  it('refuses to build for a Nitro preset that cannot host the gateway, saying why', async () => {
    const build = await nuxt(['build'], { NITRO_PRESET: 'vercel' })
    expect(build.status, build.output).not.toBe(0)
    expect(build.output).toContain('svc-auth-gateway cần máy chủ Node của chính nó (server/node-server.ts), preset Nitro "vercel" không chạy được gateway.')
  }, 300_000)
})
