// @ts-check
/**
 * `npm run demo`: builds the playground, then starts the development IAM, the sample backend and the gateway on
 * loopback, and prints the address and the accounts to try. Ctrl+C stops everything.
 * `npm run demo:oidc` (`--oidc`): the same demo against the development OpenID Provider (dev/oidc-provider.mjs) instead
 * of the contract's IAM: the login page's "Đăng nhập bằng SSO" goes to the provider's own login page. There a routes
 * file adds a `billing` route with its own audience (resource http://billing.test): GET /api/billing/token shows the
 * claims of the token billing receives (its `aud` is billing's), beside the orders of the sample backend.
 * Ports: DEMO_PORT (gateway, 3000), DEMO_IAM_PORT (4010), DEMO_BACKEND_PORT (4020), DEMO_OIDC_PORT (4030).
 * DEMO_SKIP_BUILD=1 reuses the build.
 */
import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { decodeJwt } from 'jose'
import { startSampleBackend } from './backend.mjs'
import { AUTHENTICATOR_OTP, MESSENGER_OTP, startDevIam } from './iam.mjs'
import { gatewayClient, OIDC_USERNAMES, startDevOidcProvider } from './oidc-provider.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const entry = fileURLToPath(new URL('../playground/.output/server/index.mjs', import.meta.url))
const host = '127.0.0.1'
const port = Number(process.env.DEMO_PORT ?? 3000)

if (process.env.DEMO_SKIP_BUILD !== '1' || !existsSync(entry)) {
  console.log('[demo] building the playground (nuxt build playground)…')
  const build = spawnSync('npx', ['nuxt', 'build', 'playground'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] })
  if (build.status !== 0) process.exit(build.status ?? 1)
}

const oidc = process.argv.includes('--oidc')
const origin = `http://${host}:${port}`
const iam = oidc ? undefined : await startDevIam({ host, port: Number(process.env.DEMO_IAM_PORT ?? 4010), log: true })
const provider = oidc
  ? await startDevOidcProvider({ host, port: Number(process.env.DEMO_OIDC_PORT ?? 4030), log: true, accessTokenTtl: 300, clients: [gatewayClient({ origin, clientSecret: 'gateway-secret' })] })
  : undefined
const userinfo = provider ? (await (await fetch(`${provider.url}/.well-known/openid-configuration`)).json()).userinfo_endpoint : undefined
const backend = await startSampleBackend({ host, port: Number(process.env.DEMO_BACKEND_PORT ?? 4020), ...(iam ? { iamUrl: iam.url } : { oidcUserInfoUrl: userinfo }) })
/**
 * With the provider: a billing backend that answers the claims of the token it received, behind a route with its own
 * audience (docs/routes.md, "Tokens per audience").
 */
async function billingRoute() {
  const billing = createServer((req, res) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1]
    let claims
    try {
      claims = token ? decodeJwt(token) : undefined
    }
    catch {
      claims = undefined
    }
    res.writeHead(claims ? 200 : 401, { 'content-type': 'application/json' })
    res.end(JSON.stringify(claims ? { service: 'billing', aud: claims.aud, sub: claims.sub, exp: claims.exp } : { error: 'no JWT for billing' }))
  })
  await new Promise(resolve => billing.listen(0, host, () => resolve(undefined)))
  const { port: billingPort } = /** @type {import('node:net').AddressInfo} */ (billing.address())
  const file = join(mkdtempSync(join(tmpdir(), 'svc-demo-')), 'routes.yaml')
  writeFileSync(file, `routes:\n  - name: billing\n    prefix: /api/billing\n    target: http://${host}:${billingPort}\n    resource: http://billing.test\n`)
  return file
}
const routesFile = provider ? await billingRoute() : undefined

const gateway = spawn(process.execPath, [entry], {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...process.env,
    HOST: host,
    PORT: String(port),
    ...(provider
      // The provider knows the gateway at this one origin (no proxy in front: the start's warning does not apply).
      ? { APP_AUTH_KIND: 'oidc', APP_OIDC_ISSUER: provider.url, APP_OIDC_CLIENT_ID: 'gateway', APP_OIDC_CLIENT_SECRET: 'gateway-secret', APP_AUTH_MAPPING_ROLES: 'realm_access.roles', APP_OIDC_REDIRECT_URI: `${origin}/auth/callback` }
      : { APP_AUTH_BASE_URL: iam?.url }),
    APP_API_PROXY_TARGET: backend.url,
    ...(routesFile ? { APP_API_ROUTES_FILE: routesFile } : {}),
    APP_SESSION_SECRET: process.env.APP_SESSION_SECRET ?? randomBytes(32).toString('hex'),
  },
})

if (provider) {
  console.log(`
  svc-auth-gateway demo, OpenID Connect
  ─────────────────────────────────────
  Gateway          ${origin}        (open this, then "Đăng nhập bằng SSO")
  OpenID Provider  ${provider.url}   (panva's oidc-provider; its own login page)
  Sample backend   ${backend.url}   (behind the gateway's /api/**; checks the provider's userinfo)
  Billing          ${origin}/api/billing/token   (a route with its own audience: the claims of billing's token)

  Accounts (username / password): ${OIDC_USERNAMES.map(name => `${name} / ${name}123`).join(', ')}
`)
}
else {
  console.log(`
  svc-auth-gateway demo
  ─────────────────────
  Gateway          http://${host}:${port}        (open this)
  Development IAM  ${iam?.url}
  Sample backend   ${backend.url}   (behind the gateway's /api/**)

  Accounts (username / password):
    admin   / admin123    every /orders permission
    sale    / sale123     search + create
    viewer  / viewer123   search only
    otp.sms / otp123      OTP by messenger: press "Gửi mã", code ${MESSENGER_OTP}
    otp.app / otp123      OTP by authenticator app: code ${AUTHENTICATOR_OTP}
    power   / power123    120+ permissions (the 4 KB cookie budget at work)
`)
}

function stop() {
  gateway.kill('SIGTERM')
  Promise.all([iam?.close(), provider?.close(), backend.close()]).finally(() => process.exit(0))
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
gateway.on('exit', (code) => {
  console.log(`[demo] gateway exited (${code})`)
  stop()
})
