import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gatewayClient, startDevOidcProvider } from '../../dev/oidc-provider.mjs'
import { startEchoBackend } from '../support/echo-backend'
import { freePort, logEntries, runGatewayToExit, SERVER_ENTRY, startGateway, TEST_SECRET, type RunningGateway } from '../support/gateway'
import { cookieAgent, logInWithProvider, providerKnown, untilTokenAge, type DevOidcProvider } from '../support/oidc'

// One development provider with a client per authentication method, each registered with that method alone (the
// provider refuses any other), and one gateway at a time for each: login, a renewal (access tokens of 4 s), logout's
// revocation. The secrets hold ':', '%' and '+': what RFC 6749 §2.3.1's form-encoding of client_secret_basic changes.
const SECRET = 'se:cr%et+1'
const exportJwk = (key: KeyObject, kid: string) => ({ ...key.export({ format: 'jwk' }), kid })

let provider: DevOidcProvider
let echo: Awaited<ReturnType<typeof startEchoBackend>>
let folder: string
const ports: Record<string, number> = {}
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' })
const files = { rsaPem: '', ecJwk: '', publicPem: '' }

const CLIENTS: Record<string, Record<string, unknown>> = {
  'orders-web': { clientSecret: SECRET },
  'orders-post': { clientSecret: SECRET, token_endpoint_auth_method: 'client_secret_post' },
  'orders-rsa': { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [exportJwk(rsa.publicKey, 'rsa-1')] } },
  'orders-ec': { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [exportJwk(ec.publicKey, 'ec-1')] } },
}

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'svc-client-keys-'))
  files.rsaPem = join(folder, 'rsa.pem')
  files.ecJwk = join(folder, 'ec.jwk')
  files.publicPem = join(folder, 'public.pem')
  writeFileSync(files.rsaPem, rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }))
  writeFileSync(files.ecJwk, JSON.stringify(exportJwk(ec.privateKey, 'ec-1')))
  writeFileSync(files.publicPem, rsa.publicKey.export({ type: 'spki', format: 'pem' }))
  for (const clientId of Object.keys(CLIENTS)) ports[clientId] = await freePort()
  ;[provider, echo] = await Promise.all([
    startDevOidcProvider({
      accessTokenTtl: 4,
      clients: Object.entries(CLIENTS).map(([clientId, metadata]) => gatewayClient({ origin: `http://127.0.0.1:${ports[clientId]}`, clientId, ...metadata })),
    }),
    startEchoBackend(),
  ])
}, 60_000)
afterAll(async () => {
  await Promise.all([provider?.close(), echo?.close()])
  rmSync(folder, { recursive: true, force: true })
})

/** A gateway of one client, ready (its provider's discovery read), stopped after `use`. */
async function withGateway(clientId: string, env: Record<string, string>, use: (gateway: RunningGateway) => Promise<void>) {
  const gateway = await startGateway({
    APP_AUTH_KIND: 'oidc',
    APP_OIDC_ISSUER: provider.url,
    APP_OIDC_CLIENT_ID: clientId,
    APP_API_PROXY_TARGET: echo.url,
    ...env,
  }, SERVER_ENTRY, ports[clientId])
  try {
    await providerKnown(gateway)
    await use(gateway)
  }
  finally {
    await gateway.stop()
  }
}

const grantErrors = (clientId: string) => provider.events.filter(event => event.type === 'grant.error' && event.clientId === clientId)
const chosenMethod = (gateway: RunningGateway) => logEntries(gateway.stdout()).find(entry => entry.tokenAuthMethod && entry.issuer)?.tokenAuthMethod

describe('OpenID Connect: the client authenticates as the provider registered it (token, refresh, revocation)', () => {
  it.each([
    ['client_secret_basic, chosen from the provider\'s list, for orders-web', 'orders-web', { APP_OIDC_CLIENT_SECRET: SECRET }, 'client_secret_basic', 'client_secret_basic'],
    ['client_secret_post, configured', 'orders-post', { APP_OIDC_CLIENT_SECRET: SECRET, APP_OIDC_TOKEN_AUTH_METHOD: 'client_secret_post' }, 'client_secret_post', 'client_secret_post'],
    ['private_key_jwt RS256 with a PKCS#1 PEM and APP_OIDC_CLIENT_KEY_ID, chosen for the key over the secret', 'orders-rsa', { APP_OIDC_CLIENT_KEY_ID: 'rsa-1', APP_OIDC_CLIENT_SECRET: SECRET }, 'private_key_jwt', 'private_key_jwt RS256'],
    ['private_key_jwt ES256 with a JWK carrying its kid, configured', 'orders-ec', { APP_OIDC_TOKEN_AUTH_METHOD: 'private_key_jwt' }, 'private_key_jwt', 'private_key_jwt ES256'],
  ])('%s', async (_name, clientId, env, method, seen) => {
    const keyFile = clientId === 'orders-rsa' ? files.rsaPem : clientId === 'orders-ec' ? files.ecJwk : ''
    await withGateway(clientId, { ...env, ...(keyFile ? { APP_OIDC_CLIENT_KEY_FILE: keyFile } : {}) }, async (gateway) => {
      // The log line comes a moment after /readyz says the discovery is read.
      await expect.poll(() => chosenMethod(gateway)).toBe(method)
      const agent = cookieAgent()
      const { url } = await logInWithProvider(agent, gateway.url, provider.url, { from: '/orders' })
      expect(url.href).toBe(`${gateway.url}/orders`)
      const bearer = async () => (await (await agent.go(`${gateway.url}/api/who`)).json()).headers.authorization as string
      const first = await bearer()
      expect(first).toMatch(/^Bearer \S{20,}$/)
      // Into the token's last second: the next request renews it with the refresh token, the same authentication.
      await untilTokenAge(agent, 3_400)
      const renewed = await bearer()
      expect(renewed).toMatch(/^Bearer /)
      expect(renewed).not.toBe(first)
      const revoked = provider.counters.revocation
      expect((await agent.go(`${gateway.url}/auth/logout`)).status).toBe(302)
      await expect.poll(() => provider.counters.revocation).toBe(revoked + 1)
      expect(grantErrors(clientId)).toEqual([])
      // Every request of this client authenticated the one way: the code, the renewal, the revocation.
      const requests = provider.events.filter(event => event.type === 'client_auth' && event.clientId === clientId)
      expect(new Set(requests.map(event => event.detail))).toEqual(new Set([`/token ${seen}`, `/token/revocation ${seen}`]))
      expect(requests.filter(event => event.detail === `/token ${seen}`).length).toBeGreaterThanOrEqual(2)
      expect(requests.every(event => event.error === undefined)).toBe(true)
    })
  }, 60_000)

  it('refused by the provider (a secret for a client registered with private_key_jwt): the login page says why, the log says what to try, without the secret', async () => {
    await withGateway('orders-rsa', { APP_OIDC_CLIENT_SECRET: SECRET, APP_OIDC_TOKEN_AUTH_METHOD: 'client_secret_basic' }, async (gateway) => {
      const agent = cookieAgent()
      const { url } = await logInWithProvider(agent, gateway.url, provider.url, { from: '/orders', until: at => at.origin === gateway.url && at.pathname !== '/auth/callback' })
      expect(`${url.pathname}${url.search}`).toBe('/auth/login?error=ssoFailed&redirect=%2Forders')
      expect(provider.events.filter(event => event.type === 'client_auth' && event.error).at(-1)).toMatchObject({ clientId: 'orders-rsa', detail: '/token client_secret_basic', error: 'invalid_client' })
      const hintOf = () => logEntries(gateway.stdout()).find(entry => entry.error === 'invalid_client' && entry.tokenAuthMethod === 'client_secret_basic')
      await expect.poll(hintOf).toBeDefined()
      const hint = hintOf()!
      expect(hint.msg).toContain('APP_OIDC_TOKEN_AUTH_METHOD=client_secret_post')
      expect(hint.msg).toContain('\'orders%2Drsa\'')
      for (const form of [SECRET, encodeURIComponent(SECRET), Buffer.from(`orders-rsa:${SECRET}`).toString('base64')]) expect(gateway.output()).not.toContain(form)
    })
  }, 60_000)
})

describe('OpenID Connect: a client key that cannot work stops the start, naming the variable', () => {
  it.each([
    ['a file that is not there', '/nonexistent/client.pem', 'không đọc được (ENOENT)'],
    ['a public key', 'public', 'không phải khoá riêng PEM hoặc JWK đọc được'],
  ])('%s', async (_name, file, message) => {
    const { code, output } = await runGatewayToExit({
      APP_SESSION_SECRET: TEST_SECRET,
      APP_AUTH_KIND: 'oidc',
      APP_OIDC_ISSUER: provider.url,
      APP_OIDC_CLIENT_ID: 'orders-rsa',
      APP_OIDC_CLIENT_KEY_FILE: file === 'public' ? files.publicPem : file,
    })
    expect(code).toBe(1)
    expect(output).toContain(`APP_OIDC_CLIENT_KEY_FILE: ${file === 'public' ? files.publicPem : file} ${message}`)
  })
})
