#!/usr/bin/env node
// @ts-check
/**
 * `npx svc-auth-gateway dev-iam` and `dev-oidc`: the layer's development IAM and development OpenID Provider, for a
 * team's own app under `nuxt dev` (README: "Develop your app against the development IAM"). On loopback, over plain
 * http, with the accounts of dev/iam.mjs: for development only, never in front of real users.
 *
 *   dev-iam  [--port 4010]                                   the contract's IAM
 *   dev-oidc [--port 4030] [--origin http://localhost:3000]  an OpenID Provider with clients for the gateway at --origin
 *                                                            (or GATEWAY_ORIGIN); needs the package oidc-provider
 */
import { parseArgs } from 'node:util'
import { AUTHENTICATOR_OTP, MESSENGER_OTP, startDevIam, USERS } from '../dev/iam.mjs'

const USAGE = `Usage:
  npx svc-auth-gateway dev-iam  [--port 4010]
  npx svc-auth-gateway dev-oidc [--port 4030] [--origin http://localhost:3000]

The development IAM and OpenID Provider on 127.0.0.1, for developing an app against them (never production).`

/** The accounts to log in with, as a line. */
const accounts = names => names.map(name => `${name} / ${USERS[name].password}`).join(', ')

async function devIam(port) {
  const iam = await startDevIam({ port, log: true })
  console.log(`
  Development IAM   ${iam.url}
  Accounts          ${accounts(['admin', 'sale', 'viewer', 'ops'])}
                    otp.sms / otp123 (messenger code ${MESSENGER_OTP}), otp.app / otp123 (authenticator code ${AUTHENTICATOR_OTP})
  Your app          APP_AUTH_BASE_URL=${iam.url} APP_API_PROXY_TARGET=<your backend> npx nuxt dev
`)
  return iam
}

async function devOidc(port, origin) {
  let provider, op
  try {
    provider = await import('../dev/oidc-provider.mjs')
    op = await provider.startDevOidcProvider({
      port,
      log: true,
      clients: [provider.gatewayClient({ origin, clientSecret: 'gateway-secret' }), provider.gatewayClient({ origin, clientId: 'gateway-public' })],
    })
  }
  catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('oidc-provider')) throw error
    console.error('dev-oidc needs the package oidc-provider in your app: npm install --save-dev oidc-provider')
    process.exit(1)
  }
  console.log(`
  Development OpenID Provider   ${op.issuer}
  Clients    gateway / gateway-secret (client_secret_basic), gateway-public (PKCE only), for the gateway at ${origin}
  Accounts   ${accounts(provider.OIDC_USERNAMES)}
  Your app   APP_AUTH_KIND=oidc APP_OIDC_ISSUER=${op.issuer} APP_OIDC_CLIENT_ID=gateway APP_OIDC_CLIENT_SECRET=gateway-secret \\
             APP_AUTH_MAPPING_ROLES=realm_access.roles APP_API_PROXY_TARGET=<your backend> npx nuxt dev
             (open ${origin}: the provider knows no other address)
`)
  return op
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { port: { type: 'string' }, origin: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
})
const [command] = positionals
if (values.help || !['dev-iam', 'dev-oidc'].includes(command ?? '')) {
  console[values.help ? 'log' : 'error'](USAGE)
  process.exit(values.help ? 0 : 1)
}
const port = Number(values.port ?? (command === 'dev-iam' ? 4010 : 4030))
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`--port: "${values.port}" is not a TCP port (0-65535).`)
  process.exit(1)
}
const origin = (values.origin ?? process.env.GATEWAY_ORIGIN ?? 'http://localhost:3000').replace(/\/+$/, '')
const server = command === 'dev-iam' ? await devIam(port) : await devOidc(port, origin)
const stop = () => server.close().finally(() => process.exit(0))
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
