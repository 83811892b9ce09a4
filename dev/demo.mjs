// @ts-check
/**
 * `npm run demo`: builds the playground, then starts the development IAM, the sample backend and the gateway on
 * loopback, and prints the address and the accounts to try. Ctrl+C stops everything.
 * Ports: DEMO_PORT (gateway, 3000), DEMO_IAM_PORT (4010), DEMO_BACKEND_PORT (4020). DEMO_SKIP_BUILD=1 reuses the build.
 */
import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { startSampleBackend } from './backend.mjs'
import { AUTHENTICATOR_OTP, MESSENGER_OTP, startDevIam } from './iam.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const entry = fileURLToPath(new URL('../playground/.output/server/index.mjs', import.meta.url))
const host = '127.0.0.1'
const port = Number(process.env.DEMO_PORT ?? 3000)

if (process.env.DEMO_SKIP_BUILD !== '1' || !existsSync(entry)) {
  console.log('[demo] building the playground (nuxt build playground)…')
  const build = spawnSync('npx', ['nuxt', 'build', 'playground'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] })
  if (build.status !== 0) process.exit(build.status ?? 1)
}

const iam = await startDevIam({ host, port: Number(process.env.DEMO_IAM_PORT ?? 4010), log: true })
const backend = await startSampleBackend({ host, port: Number(process.env.DEMO_BACKEND_PORT ?? 4020), iamUrl: iam.url })
const gateway = spawn(process.execPath, [entry], {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...process.env,
    HOST: host,
    PORT: String(port),
    APP_AUTH_BASE_URL: iam.url,
    APP_API_PROXY_TARGET: backend.url,
    APP_SESSION_SECRET: process.env.APP_SESSION_SECRET ?? randomBytes(32).toString('hex'),
  },
})

console.log(`
  svc-auth-gateway demo
  ─────────────────────
  Gateway          http://${host}:${port}        (open this)
  Development IAM  ${iam.url}
  Sample backend   ${backend.url}   (behind the gateway's /api/**)

  Accounts (username / password):
    admin   / admin123    every /orders permission
    sale    / sale123     search + create
    viewer  / viewer123   search only
    otp.sms / otp123      OTP by messenger: press "Gửi mã", code ${MESSENGER_OTP}
    otp.app / otp123      OTP by authenticator app: code ${AUTHENTICATOR_OTP}
    power   / power123    120+ permissions (the 4 KB cookie budget at work)
`)

function stop() {
  gateway.kill('SIGTERM')
  Promise.all([iam.close(), backend.close()]).finally(() => process.exit(0))
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
gateway.on('exit', (code) => {
  console.log(`[demo] gateway exited (${code})`)
  stop()
})
