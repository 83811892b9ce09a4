// @ts-check
/**
 * `node dev/oidc-demo-check.mjs`: a headless end-to-end proof of the relying-party side with openid-client v6 against
 * dev/oidc-provider.mjs, without the gateway. Each step prints what it saw; the process exits 1 on the first surprise.
 * Covers: discovery over http, PKCE + state + nonce, the provider's login form by fetch, the code grant (and its
 * refusals), userinfo, refresh rotation and reuse, RP-initiated logout, back-channel logout tokens verified by jose,
 * ID token refusals (aud, iss, nonce, exp, alg none, unknown key, bad signature), key rotation, a public client.
 * Findings are written up in docs/oidc-notes.md.
 */
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import * as jose from 'jose'
import * as client from 'openid-client'
import { cookieAgent, throughProviderForm } from './oidc-browser.mjs'
import { gatewayClient, startDevOidcProvider } from './oidc-provider.mjs'

const BACKCHANNEL_EVENT = 'http://schemas.openid.net/event/backchannel-logout'
const show = (label, value) => console.log(`  ${label.padEnd(34)} ${typeof value === 'string' ? value : JSON.stringify(value)}`)
const step = title => console.log(`\n▸ ${title}`)

/** What an error says, in the shape the gateway will branch on. */
function describe(error) {
  return { name: error.constructor.name, code: error.code, error: error.error, status: error.status, message: error.message, cause: error.cause?.message ?? error.cause?.code }
}
async function refusal(label, promise, expect) {
  try {
    await promise
  }
  catch (error) {
    const seen = describe(error)
    show(label, Object.fromEntries(Object.entries(seen).filter(([, value]) => value !== undefined)))
    for (const [key, value] of Object.entries(expect)) assert.equal(seen[key], value, `${label}: ${key}`)
    return error
  }
  throw new Error(`${label}: accepted`)
}

// ── A relying party's back-channel endpoint: every logout token is kept with the verdict of verifyLogoutToken. ──
const received = []
const rp = createServer(async (req, res) => {
  let body = ''
  for await (const chunk of req) body += chunk
  const token = new URLSearchParams(body).get('logout_token') ?? ''
  const verdict = await verifyLogoutToken(token).then(claims => ({ ok: true, claims }), error => ({ ok: false, error: error.message }))
  received.push({ token, ...verdict })
  res.writeHead(verdict.ok ? 200 : 400, { 'cache-control': 'no-store' }).end()
})
await new Promise(resolve => rp.listen(0, '127.0.0.1', () => resolve(undefined)))
const origin = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (rp.address()).port}`
const redirectUri = `${origin}/auth/callback`

const op = await startDevOidcProvider({
  accessTokenTtl: 10,
  clients: [gatewayClient({ origin, clientSecret: 'gateway-secret' }), gatewayClient({ origin, clientId: 'gateway-public' })],
})

// ── Logout token validation: jose does the JWS and the registered claims, the rest is OIDC Back-Channel Logout 1.0 §2.6. ──
const seenJti = new Set()
let jwks = jose.createRemoteJWKSet(new URL(`${op.url}/jwks`))
async function verifyLogoutToken(token, keys = jwks) {
  const { payload } = await jose.jwtVerify(token, keys, {
    issuer: op.url,
    audience: 'gateway',
    typ: 'logout+jwt', // oidc-provider sets it; the spec only recommends it, so a gateway for any provider should not require it
    algorithms: ['RS256'],
    clockTolerance: 5,
    maxTokenAge: 120, // iat must be recent
    requiredClaims: ['iat', 'jti'],
  })
  const events = /** @type {Record<string, unknown> | undefined} */ (payload.events)
  if (!events || typeof events !== 'object' || typeof events[BACKCHANNEL_EVENT] !== 'object') throw new Error('no back-channel logout event')
  if (!payload.sid && !payload.sub) throw new Error('neither sid nor sub')
  if ('nonce' in payload) throw new Error('a logout token must not carry a nonce')
  if (seenJti.has(payload.jti)) throw new Error('jti replayed')
  seenJti.add(/** @type {string} */ (payload.jti))
  return payload
}

// ── A browser's part, by fetch (dev/oidc-browser.mjs): followed until an address leaves the provider (the callback). ──
const leavesProvider = (/** @type {URL} */ at) => at.origin !== op.url

/** Logs in through the provider's own form; returns the callback URL the provider sent the browser to. */
async function logIn(config, { username = 'admin', password = 'admin123', cancel = false, agent = cookieAgent(), scope = 'openid profile email offline_access' } = {}) {
  const verifier = client.randomPKCECodeVerifier()
  const checks = { pkceCodeVerifier: verifier, expectedState: client.randomState(), expectedNonce: client.randomNonce() }
  const authorizationUrl = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: checks.expectedState,
    nonce: checks.expectedNonce,
  })
  const { url } = await throughProviderForm(agent, authorizationUrl, op.url, { username, password, cancel, stop: leavesProvider })
  return { callbackUrl: url, checks, agent, authorizationUrl }
}

const http = [client.allowInsecureRequests] // the issuer is http://127.0.0.1: openid-client refuses http unless told so

step('Discovery (openid-client refuses an http issuer unless allowInsecureRequests is executed on the config)')
await refusal('discovery over http, no opt-in', client.discovery(new URL(op.url), 'gateway', 'gateway-secret'), { code: 'OAUTH_HTTP_REQUEST_FORBIDDEN' })
/** Discovery with retries: openid-client retries nothing itself (only a DPoP nonce). */
async function discover(clientId, secret, attempts = 5) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.discovery(new URL(op.url), clientId, { [client.clockTolerance]: 5 }, secret ? client.ClientSecretBasic(secret) : client.None(), { execute: http, timeout: 5 })
    }
    catch (error) {
      if (attempt >= attempts) throw error
      await sleep(200 * 2 ** attempt)
    }
  }
}
const config = await discover('gateway', 'gateway-secret')
client.enableNonRepudiationChecks(config) // without this the ID token's signature is NOT checked (see below)
show('issuer', config.serverMetadata().issuer)
show('end_session_endpoint', config.serverMetadata().end_session_endpoint ?? '')
show('timeout (config.timeout)', `${config.timeout} s`)

step('Code flow: PKCE S256, state, nonce; the provider\'s login form by fetch')
const wrong = await logIn(config, { password: 'nope' }).catch(error => error)
show('wrong password', wrong instanceof Error ? wrong.message : `stays on ${wrong.callbackUrl.pathname}`)
const first = await logIn(config)
show('callback', first.callbackUrl.href.replace(/code=[^&]+/, 'code=…'))
const tokens = await client.authorizationCodeGrant(config, first.callbackUrl, first.checks)
const claims = tokens.claims()
assert.ok(claims)
show('ID token claims', claims)
show('sizes (bytes) id / access / refresh', [tokens.id_token?.length, tokens.access_token.length, tokens.refresh_token?.length])
show('access token', `${tokens.access_token.split('.').length === 3 ? 'JWT' : 'opaque'}, expires_in ${tokens.expires_in}, scope "${tokens.scope}"`)
assert.equal(claims.preferred_username, 'admin')
assert.deepEqual(claims.realm_access, { roles: ['admin'] })
assert.ok(tokens.refresh_token, 'a refresh token')

step('Userinfo')
const profile = await client.fetchUserInfo(config, tokens.access_token, claims.sub)
show('userinfo', profile)
await refusal('userinfo for another sub', client.fetchUserInfo(config, tokens.access_token, 'u-viewer'), { code: 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED' })

step('A replayed code: refused, and the provider revokes what the first exchange issued')
await refusal('replayed code', client.authorizationCodeGrant(config, first.callbackUrl, first.checks), { name: 'ResponseBodyError', error: 'invalid_grant', status: 400 })
await refusal('first access token, after the replay', client.fetchUserInfo(config, tokens.access_token, claims.sub), { name: 'WWWAuthenticateChallengeError', status: 401 })
await refusal('first refresh token, after the replay', client.refreshTokenGrant(config, /** @type {string} */ (tokens.refresh_token)), { error: 'invalid_grant' })

step('Callback refusals')
const another = await logIn(config)
await refusal('wrong state', client.authorizationCodeGrant(config, another.callbackUrl, { ...another.checks, expectedState: 'other' }), { code: 'OAUTH_INVALID_RESPONSE' })
await refusal('state missing from the callback', client.authorizationCodeGrant(config, new URL(another.callbackUrl.href.replace(/&?state=[^&]+/, '')), another.checks), { code: 'OAUTH_INVALID_RESPONSE' })
await refusal('wrong nonce', client.authorizationCodeGrant(config, another.callbackUrl, { ...another.checks, expectedNonce: 'other' }), { code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' })
const wrongVerifier = await logIn(config)
await refusal('wrong PKCE verifier', client.authorizationCodeGrant(config, wrongVerifier.callbackUrl, { ...wrongVerifier.checks, pkceCodeVerifier: client.randomPKCECodeVerifier() }), { error: 'invalid_grant' })
const cancelled = await logIn(config, { cancel: true })
show('cancel on the login page', cancelled.callbackUrl.search)
await refusal('access_denied in the callback', client.authorizationCodeGrant(config, cancelled.callbackUrl, cancelled.checks), { name: 'AuthorizationResponseError', error: 'access_denied' })
const noPkce = await cookieAgent().follow(client.buildAuthorizationUrl(config, { redirect_uri: redirectUri, scope: 'openid', state: 's' }), {}, leavesProvider)
show('authorization without PKCE', noPkce.url.search)
assert.match(noPkce.url.search, /error=invalid_request/)

step('ID token refusals (the provider\'s next token response is altered)')
async function tampered(label, change, expect, on = config) {
  const attempt = await logIn(on)
  op.tamperNextTokenResponse(async (body, tools) => ({ ...body, id_token: await change(tools.decode(body.id_token), tools) }))
  return refusal(label, client.authorizationCodeGrant(on, attempt.callbackUrl, attempt.checks), expect)
}
const now = () => Math.floor(Date.now() / 1000)
await tampered('wrong aud', (c, t) => t.sign({ ...c, aud: 'someone-else' }), { code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' })
await tampered('extra aud without azp', (c, t) => t.sign({ ...c, aud: ['gateway', 'other'], azp: undefined }), { code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' })
await tampered('wrong iss', (c, t) => t.sign({ ...c, iss: 'http://evil.example' }), { code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' })
await tampered('expired (exp 60 s ago)', (c, t) => t.sign({ ...c, iat: now() - 120, exp: now() - 60 }), { code: 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED' })
await tampered('alg none', (c, t) => t.sign(c, { key: 'none' }), { code: 'OAUTH_INVALID_RESPONSE' })
await tampered('signed by a key the JWKS lacks (new kid)', (c, t) => t.sign(c, { key: 'foreign', kid: 'unknown-kid' }), { code: 'OAUTH_KEY_SELECTION_FAILED' })
await tampered('bad signature (known kid)', (c, t) => t.sign(c, { key: 'foreign' }), { code: 'OAUTH_INVALID_RESPONSE' })
const trusting = await discover('gateway', 'gateway-secret')
const forged = await logIn(trusting)
op.tamperNextTokenResponse(async (body, tools) => ({ ...body, id_token: await tools.sign({ ...tools.decode(body.id_token), name: 'Forged' }, { key: 'foreign' }) }))
const accepted = await client.authorizationCodeGrant(trusting, forged.callbackUrl, forged.checks)
show('forged signature WITHOUT enableNonRepudiationChecks', `accepted, name "${accepted.claims()?.name}"`)

step('Access token expiry and refresh (rotation on)')
const main = await logIn(config)
const mainTokens = await client.authorizationCodeGrant(config, main.callbackUrl, main.checks)
await sleep(Math.max(0, (mainTokens.expiresIn() ?? 0) * 1000) + 1000)
await refusal('userinfo with the expired token', client.fetchUserInfo(config, mainTokens.access_token, claims.sub), { name: 'WWWAuthenticateChallengeError', status: 401 })
const refreshedBefore = op.counters.refresh_token
const refreshed = await client.refreshTokenGrant(config, /** @type {string} */ (mainTokens.refresh_token))
show('new refresh token differs', refreshed.refresh_token !== mainTokens.refresh_token)
show('refresh response has an id_token', `${Boolean(refreshed.id_token)}; nonce in it: ${String(refreshed.claims()?.nonce)}`)
assert.notEqual(refreshed.refresh_token, mainTokens.refresh_token)
await client.fetchUserInfo(config, refreshed.access_token, claims.sub)
show('new access token works at userinfo', true)
await refusal('old refresh token reused', client.refreshTokenGrant(config, /** @type {string} */ (mainTokens.refresh_token)), { error: 'invalid_grant' })
await refusal('the NEW refresh token after that reuse', client.refreshTokenGrant(config, /** @type {string} */ (refreshed.refresh_token)), { error: 'invalid_grant' })
await refusal('the new access token after that reuse', client.fetchUserInfo(config, refreshed.access_token, claims.sub), { status: 401 })
show('counters', { refresh_token: op.counters.refresh_token - refreshedBefore, refresh_token_reuse: op.counters.refresh_token_reuse })

step('Two refreshes racing with the same refresh token')
const race = await logIn(config)
const raceTokens = await client.authorizationCodeGrant(config, race.callbackUrl, race.checks)
const outcomes = await Promise.allSettled([1, 2].map(() => client.refreshTokenGrant(config, /** @type {string} */ (raceTokens.refresh_token))))
show('outcomes', outcomes.map(outcome => outcome.status === 'fulfilled' ? 'ok' : /** @type {any} */ (outcome.reason).error))
const winner = outcomes.find(outcome => outcome.status === 'fulfilled')
if (winner) await refusal('the winner\'s new refresh token', client.refreshTokenGrant(config, /** @type {string} */ (winner.value.refresh_token)), { error: 'invalid_grant' })

step('RP-initiated logout (end_session) with a back-channel logout to the client')
const session = await logIn(config, { username: 'viewer', password: 'viewer123' })
const viewer = await client.authorizationCodeGrant(config, session.callbackUrl, session.checks)
const endSessionUrl = client.buildEndSessionUrl(config, { id_token_hint: /** @type {string} */ (viewer.id_token), post_logout_redirect_uri: `${origin}/`, state: 'after-logout' })
show('end-session URL', endSessionUrl.href.replace(/id_token_hint=[^&]+/, 'id_token_hint=…'))
const confirm = await session.agent.go(endSessionUrl)
const page = await confirm.text()
show('what the browser gets first', `${confirm.status}, ${/<title>([^<]*)/.exec(page)?.[1]}, auto-submit ${page.includes('.submit()')}`)
const form = new URLSearchParams([...page.matchAll(/<input type="hidden" name="(\w+)" value="([^"]*)"/g)].map(([, name, value]) => [name, value]))
const action = /** @type {string} */ (/<form[^>]*action="([^"]+)"/.exec(page)?.[1])
const ended = await session.agent.go(action, { method: 'POST', body: form })
show('after the form posts itself', `${ended.status} → ${ended.headers.get('location')}`)
assert.equal(ended.headers.get('location'), `${origin}/?state=after-logout`)
const logoutToken = received.at(-1)
assert.ok(logoutToken?.ok, `logout token verified: ${logoutToken?.error}`)
show('logout token header', jose.decodeProtectedHeader(logoutToken.token))
show('logout token claims', logoutToken.claims)
show('logout token sid = ID token sid', logoutToken.claims.sid === viewer.claims()?.sid)
await refusal('refresh after logout', client.refreshTokenGrant(config, /** @type {string} */ (viewer.refresh_token)), { error: 'invalid_grant' })
const again = await logIn(config, { username: 'viewer', password: 'viewer123', agent: session.agent })
show('next authorization asks for a login', again.callbackUrl.origin === origin ? 'yes' : 'no')

step('Back-channel logout triggered at the provider: op.backchannelLogout({ sub })')
const admin = await logIn(config)
const adminTokens = await client.authorizationCodeGrant(config, admin.callbackUrl, admin.checks)
const sent = await op.backchannelLogout({ sub: 'u-admin' })
show('deliveries (one per provider session of u-admin)', `${sent.length}, all ok: ${sent.every(delivery => delivery.ok)}`)
assert.ok(received.at(-1)?.ok)
show('its sid matches the ID token sid', received.at(-1)?.claims.sid === adminTokens.claims()?.sid)
await refusal('refresh after it', client.refreshTokenGrant(config, /** @type {string} */ (adminTokens.refresh_token)), { error: 'invalid_grant' })

step('Logout tokens the validator must refuse (signed with a local key)')
const { publicKey, privateKey } = await jose.generateKeyPair('RS256')
const localKeys = jose.createLocalJWKSet({ keys: [{ ...(await jose.exportJWK(publicKey)), kid: 'k', alg: 'RS256' }] })
const logout = claimsFor => new jose.SignJWT({ iss: op.url, aud: 'gateway', iat: now(), jti: crypto.randomUUID(), sid: 's1', events: { [BACKCHANNEL_EVENT]: {} }, ...claimsFor })
  .setProtectedHeader({ alg: 'RS256', kid: 'k', typ: 'logout+jwt' }).sign(privateKey)
show('a correct one', Boolean(await verifyLogoutToken(await logout({}), localKeys)))
await refusal('with a nonce', verifyLogoutToken(await logout({ nonce: 'n' }), localKeys), { message: 'a logout token must not carry a nonce' })
await refusal('without the events claim', verifyLogoutToken(await logout({ events: undefined }), localKeys), { message: 'no back-channel logout event' })
await refusal('without sid and sub', verifyLogoutToken(await logout({ sid: undefined }), localKeys), { message: 'neither sid nor sub' })
await refusal('old iat', verifyLogoutToken(await logout({ iat: now() - 3600 }), localKeys), { code: 'ERR_JWT_EXPIRED' })
await refusal('wrong aud', verifyLogoutToken(await logout({ aud: 'other' }), localKeys), { code: 'ERR_JWT_CLAIM_VALIDATION_FAILED' })
const once = await logout({})
await verifyLogoutToken(once, localKeys)
await refusal('replayed jti', verifyLogoutToken(once, localKeys), { message: 'jti replayed' })

step('Key rotation: op.rotateKeys()')
const oldKid = op.currentKid()
const newKid = op.rotateKeys()
const published = await (await fetch(`${op.url}/jwks`)).json()
show('JWKS kids (new first)', published.keys.map(key => key.kid))
const rotated = await logIn(config)
await refusal('ID token by the new key, JWKS cached < 60 s', client.authorizationCodeGrant(config, rotated.callbackUrl, rotated.checks), { code: 'OAUTH_KEY_SELECTION_FAILED' })
const fresh = await discover('gateway', 'gateway-secret')
client.enableNonRepudiationChecks(fresh)
const rotatedAgain = await logIn(fresh)
const afterRotation = await client.authorizationCodeGrant(fresh, rotatedAgain.callbackUrl, rotatedAgain.checks)
show('same with a fresh Configuration', `ok, kid ${jose.decodeProtectedHeader(/** @type {string} */ (afterRotation.id_token)).kid === newKid ? 'new' : 'old'} (old ${oldKid.slice(0, 8)}…)`)
jwks = jose.createRemoteJWKSet(new URL(`${op.url}/jwks`))

step('Public client (token_endpoint_auth_method none, PKCE only)')
const publicConfig = await discover('gateway-public')
client.enableNonRepudiationChecks(publicConfig)
const pub = await logIn(publicConfig, { username: 'sale', password: 'sale123' })
const publicTokens = await client.authorizationCodeGrant(publicConfig, pub.callbackUrl, pub.checks)
const publicRefreshed = await client.refreshTokenGrant(publicConfig, /** @type {string} */ (publicTokens.refresh_token))
show('sale: permissions / refresh rotates', [publicTokens.claims()?.permissions, publicRefreshed.refresh_token !== publicTokens.refresh_token])
const powerLogin = await logIn(publicConfig, { username: 'power', password: 'power123' })
const power = await client.authorizationCodeGrant(publicConfig, powerLogin.callbackUrl, powerLogin.checks)
show('power: sizes id / access / refresh', [power.id_token?.length, power.access_token.length, power.refresh_token?.length])

step('Provider counters')
show('counters', op.counters)

await op.close()
await new Promise(resolve => rp.close(() => resolve(undefined)))
console.log('\nAll checks passed.')
