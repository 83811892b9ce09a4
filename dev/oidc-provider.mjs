// @ts-check
/**
 * Development OpenID Provider: panva's oidc-provider (certified) on loopback over plain http, with the accounts of
 * dev/iam.mjs, a login page of its own (real passwords, consent skipped), short-lived access tokens, rotating refresh
 * tokens, RP-initiated logout without a confirmation click, back-channel logout, resource indicators (RFC 8707: JWT
 * access tokens for the resource servers of RESOURCE_SERVERS, `aud` the resource) and token exchange (RFC 8693) for
 * them. Used by the OIDC tests and demo.
 * `node dev/oidc-provider.mjs` runs it alone (PORT, default 4030). Notes on the provider and on openid-client:
 * docs/oidc-notes.md.
 */
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import { pathToFileURL } from 'node:url'
import { decodeJwt, decodeProtectedHeader, importJWK, SignJWT, UnsecuredJWT } from 'jose'
import { AUTHENTICATOR_OTP, USERS } from './iam.mjs'

/** The accounts of dev/iam.mjs that log in with a password alone (no OTP, no failure scenario). */
export const OIDC_USERNAMES = ['admin', 'sale', 'viewer', 'ops', 'power']

/**
 * The login page's form, for browsers and for fetch: fields `username`, `password`, and `otp` when the request asks
 * for `acr_values=mfa` (the code is MFA_CODE); `button[type=submit]` signs in.
 */
export const LOGIN_FORM = { username: 'input[name="username"]', password: 'input[name="password"]', otp: 'input[name="otp"]', submit: 'button[type="submit"]', cancel: 'button[name="cancel"]' }

/**
 * Step-up: a login asked for `acr_values` holding `mfa` shows a one-time code field too; with this code the ID token's
 * `acr` is `mfa` (`amr` pwd, otp), without it (a password alone) `pwd`.
 */
export const MFA_CODE = AUTHENTICATOR_OTP

/**
 * Claims of one account, Keycloak's shape: `realm_access.roles` (role codes) and `permissions` (the web permissions
 * the contract's IAM gives, as strings). `sub` is the IAM's userId (`u-<username>`).
 * @param {string} username
 */
export function accountClaims(username) {
  const user = USERS[username]
  const [given, ...rest] = user.fullName.split(' ').reverse()
  return {
    sub: `u-${username}`,
    preferred_username: username,
    name: user.fullName,
    given_name: given,
    family_name: rest.reverse().join(' '),
    email: user.email,
    email_verified: true,
    realm_access: { roles: user.roles.map(role => role.code) },
    permissions: user.authorization.filter(entry => entry.type === 'web').map(entry => entry.uri),
  }
}

/**
 * The resource servers the provider issues access tokens for (RFC 8707 resource indicators), with the scopes each
 * accepts: a token request with `resource=http://billing.test` gets a JWT whose `aud` is that resource. The demo's
 * routes file and the tests use them; a resource not listed is refused (invalid_target).
 */
export const RESOURCE_SERVERS = {
  'http://orders.test': 'orders:read orders:write',
  'http://billing.test': 'billing:read',
}

/** RFC 8693's grant type, and the type of the token a client exchanges (an access token of this provider). */
export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange'
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token'

/**
 * Client metadata for a gateway at `origin`: redirect `/auth/callback`, post-logout `/auth/logged-out` (and `/`, `/auth/login`),
 * back-channel logout at `/auth/backchannel-logout` with `sid` required. No secret: a public client (PKCE only).
 * Any other client metadata overrides these: `token_endpoint_auth_method: 'client_secret_post'`, or `'private_key_jwt'`
 * with `jwks: { keys: [publicJwk] }`, `require_pushed_authorization_requests: true`, ...
 * @param {{ origin: string, clientId?: string, clientSecret?: string, [key: string]: unknown }} options
 */
export function gatewayClient({ origin, clientId = 'gateway', clientSecret, ...metadata }) {
  return {
    client_id: clientId,
    ...(clientSecret ? { client_secret: clientSecret, token_endpoint_auth_method: 'client_secret_basic' } : { token_endpoint_auth_method: 'none' }),
    grant_types: ['authorization_code', 'refresh_token', TOKEN_EXCHANGE],
    response_types: ['code'],
    redirect_uris: [`${origin}/auth/callback`],
    post_logout_redirect_uris: [`${origin}/auth/logged-out`, `${origin}/`, `${origin}/auth/login`],
    backchannel_logout_uri: `${origin}/auth/backchannel-logout`,
    backchannel_logout_session_required: true,
    ...metadata,
  }
}

// oidc-provider 9 warns "Unsupported runtime" when imported on Node 20 (it asks for 22 LTS); it works on 20.19, which
// this project supports, so that one line is dropped. Its other warnings stay visible.
let providerModule
let errors
async function loadProvider() {
  if (!providerModule) {
    const warn = console.warn
    console.warn = (...args) => {
      if (!String(args[0]).includes('Unsupported runtime')) warn(...args)
    }
    try {
      providerModule = await import('oidc-provider')
      errors = providerModule.errors
    }
    finally {
      console.warn = warn
    }
  }
  return providerModule.default
}

/** A fresh RS256 signing key as a private JWK with a kid. */
function signingKey() {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  return { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'RS256', use: 'sig' }
}

/**
 * Storage for the provider (its adapter interface), one per started provider, kept across key rotations: Sessions,
 * Grants, tokens, Interactions. Expiry by time; tokens indexed by grant so a grant revokes them all.
 */
function createStore() {
  /** @type {Map<string, { payload: any, expiresAt: number }>} */
  const entries = new Map()
  /** @type {Map<string, Set<string>>} */
  const byGrant = new Map()
  const read = (key) => {
    const entry = entries.get(key)
    if (entry && entry.expiresAt <= Date.now()) entries.delete(key)
    return entries.get(key)?.payload
  }
  class Adapter {
    constructor(model) {
      this.model = model
    }

    async upsert(id, payload, expiresIn) {
      const key = `${this.model}:${id}`
      entries.set(key, { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : Infinity })
      if (this.model === 'Session') entries.set(`sessionUid:${payload.uid}`, { payload: id, expiresAt: Infinity })
      if (payload.grantId) byGrant.set(payload.grantId, (byGrant.get(payload.grantId) ?? new Set()).add(key))
    }

    async find(id) {
      return read(`${this.model}:${id}`)
    }

    async findByUid(uid) {
      const id = read(`sessionUid:${uid}`)
      return id ? read(`Session:${id}`) : undefined
    }

    async findByUserCode() {
      return undefined
    }

    async consume(id) {
      const payload = read(`${this.model}:${id}`)
      if (payload) payload.consumed = Math.floor(Date.now() / 1000)
    }

    async destroy(id) {
      entries.delete(`${this.model}:${id}`)
    }

    async revokeByGrantId(grantId) {
      for (const key of byGrant.get(grantId) ?? []) entries.delete(key)
      byGrant.delete(grantId)
    }
  }
  /** Every live Session payload. */
  const sessions = () => [...entries.keys()].filter(key => key.startsWith('Session:')).map(key => [key.slice(8), read(key)]).filter(([, payload]) => payload)
  return { Adapter, sessions }
}

/** The endpoints where a client authenticates: token, revocation, pushed authorization requests. */
const CLIENT_AUTH_PATHS = ['/token', '/token/revocation', '/request']

/**
 * The client authentication method a request used, as its parts show it.
 * @param {string | undefined} authorization
 * @param {Record<string, unknown> | undefined} body
 */
function clientAuthOf(authorization, body) {
  if (/^basic /i.test(authorization ?? '')) return 'client_secret_basic'
  if (typeof body?.client_assertion === 'string') {
    try {
      return `private_key_jwt ${decodeProtectedHeader(body.client_assertion).alg}`
    }
    catch {
      return 'private_key_jwt ?'
    }
  }
  if (body?.client_secret) return 'client_secret_post'
  return 'none'
}

const page = (title, body) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head><body><main><h1>${title}</h1>${body}</main></body></html>`
const escapeHtml = value => String(value).replace(/[&<>"']/g, c => `&#${c.charCodeAt(0)};`)

function loginPage(uid, { username = '', error = '', mfa = false } = {}) {
  return page('Sign in', `${error ? `<p role="alert" id="error">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/interaction/${uid}/login">
<label>Username <input name="username" autocomplete="username" required autofocus value="${escapeHtml(username)}"></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
${mfa ? '<label>One-time code <input name="otp" inputmode="numeric" autocomplete="one-time-code" required></label>' : ''}
<button type="submit">Sign in</button> <button type="submit" name="cancel" value="yes" formaction="/interaction/${uid}/abort" formnovalidate>Cancel</button>
</form>`)
}

async function readForm(req) {
  let text = ''
  for await (const chunk of req) {
    text += chunk
    if (text.length > 10_000) throw new Error('form too large')
  }
  return Object.fromEntries(new URLSearchParams(text))
}

/**
 * @typedef {{ decode: typeof decodeJwt, sign: (claims: Record<string, unknown>, how?: { key?: 'current' | 'foreign' | 'none', kid?: string }) => Promise<string> }} TamperTools
 * @typedef {{ type: string, at: number, clientId?: string, sub?: string, sid?: string, error?: string, detail?: string }} ProviderEvent
 */

/**
 * Starts the development OpenID Provider on 127.0.0.1.
 * @param {{
 *   host?: string, port?: number, log?: boolean,
 *   clients?: Array<Record<string, unknown>>,
 *   accessTokenTtl?: number, idTokenTtl?: number, refreshTokenTtl?: number, sessionTtl?: number,
 *   rotateRefreshToken?: boolean, conformIdTokenClaims?: boolean, logoutPrompt?: 'auto' | 'confirm',
 *   clockTolerance?: number, resourceServers?: Record<string, string>, endSession?: boolean, requirePar?: boolean,
 * }} [options]
 *  Defaults: port 0, clients: a confidential `gateway` (secret `gateway-secret`) and a public `gateway-public`
 *  for http://127.0.0.1:3000; accessTokenTtl 30 s, idTokenTtl 300 s, refreshTokenTtl 1 day, sessionTtl 1 day,
 *  rotateRefreshToken true, conformIdTokenClaims false (profile claims in the ID token too, as Keycloak does),
 *  logoutPrompt 'auto' (the confirmation page submits itself), clockTolerance 5 s, resourceServers RESOURCE_SERVERS
 *  (resource → the scopes it accepts), endSession true (false: no
 *  end_session_endpoint, as some providers have none), requirePar false (true: every client must push its
 *  authorization requests, RFC 9126, and discovery says require_pushed_authorization_requests; one client alone:
  *  its metadata `require_pushed_authorization_requests: true`).
 */
export async function startDevOidcProvider(options = {}) {
  const Provider = await loadProvider()
  const host = options.host ?? '127.0.0.1'
  const log = options.log ? (...args) => console.log('[dev-oidc]', ...args) : () => {}
  const clients = options.clients ?? [
    gatewayClient({ origin: 'http://127.0.0.1:3000', clientSecret: 'gateway-secret' }),
    gatewayClient({ origin: 'http://127.0.0.1:3000', clientId: 'gateway-public' }),
  ]
  const resourceServers = options.resourceServers ?? RESOURCE_SERVERS
  const store = createStore()
  const foreignKey = signingKey()
  /** @type {((body: any, tools: TamperTools) => any) | undefined} */
  let tamper
  /** @type {{ status: number, body: Record<string, unknown>, times: number } | undefined} */
  let refusal
  const cookieKeys = [randomBytes(32).toString('base64url')]
  let keys = [signingKey()]
  /** @type {ProviderEvent[]} */
  const events = []
  const counters = { authorization_code: 0, refresh_token: 0, token_exchange: 0, grant_error: 0, refresh_token_reuse: 0, end_session: 0, backchannel_success: 0, backchannel_error: 0, logins: 0, login_failures: 0, revocation: 0 }
  const record = (event) => {
    events.push({ at: Date.now(), ...event })
    if (events.length > 1000) events.shift()
  }

  const server = createServer()
  await new Promise(resolve => server.listen(options.port ?? 0, host, () => resolve(undefined)))
  const address = /** @type {import('node:net').AddressInfo} */ (server.address())
  const issuer = `http://${host}:${address.port}`

  const configuration = () => ({
    adapter: store.Adapter,
    clients,
    jwks: { keys },
    cookies: { keys: cookieKeys, names: { session: 'op_session', interaction: 'op_interaction', resume: 'op_interaction_resume' } },
    findAccount: (_ctx, sub) => {
      const username = OIDC_USERNAMES.find(name => `u-${name}` === sub)
      return username ? { accountId: sub, claims: () => accountClaims(username) } : undefined
    },
    // Which claims each scope releases (sub always). realm_access and permissions ride on `profile`, so the issue's
    // default scopes (openid profile email offline_access) carry them; `roles` / `permissions` alone also work.
    claims: {
      openid: ['sub'],
      profile: ['name', 'given_name', 'family_name', 'preferred_username', 'realm_access', 'permissions'],
      email: ['email', 'email_verified'],
      roles: ['realm_access'],
      permissions: ['permissions'],
      sid: null,
      auth_time: null,
      acr: null,
      iss: null,
    },
    responseTypes: ['code'],
    acrValues: ['pwd', 'mfa'],
    scopes: ['openid', 'offline_access', 'profile', 'email', 'roles', 'permissions'],
    conformIdTokenClaims: options.conformIdTokenClaims ?? false,
    clockTolerance: options.clockTolerance ?? 5,
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      backchannelLogout: { enabled: true },
      // A token request without `resource` gets the token it got before (opaque, for userinfo: the gateway's main
      // token); one with `resource` a JWT for that resource server, if the grant covers it (the login asked for it).
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => undefined,
        useGrantedResource: async () => false,
        getResourceServerInfo: async (_ctx, resource) => {
          const scope = resourceServers[resource]
          if (scope === undefined) throw new errors.InvalidTarget()
          return { scope, audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: options.accessTokenTtl ?? 30, jwt: { sign: { alg: 'RS256' } } }
        },
      },
      pushedAuthorizationRequests: { enabled: true, requirePushedAuthorizationRequests: options.requirePar ?? false },
      revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
      rpInitiatedLogout: {
        enabled: options.endSession ?? true,
        logoutSource: async (ctx, form) => {
          // The form posts xsrf; with logout=yes the provider's whole session ends (every client's grant, and a
          // back-channel logout to each client that registered one). 'auto' submits it without a click.
          const auto = (options.logoutPrompt ?? 'auto') === 'auto'
          ctx.body = page('Sign out', `${form.replace('</form>', '<input type="hidden" name="logout" value="yes"></form>')}
<button type="submit" form="op.logoutForm">Sign out</button>${auto ? '<script>document.getElementById(\'op.logoutForm\').submit()</script>' : ''}`)
        },
        postLogoutSuccessSource: async (ctx) => {
          ctx.body = page('Signed out', '<p>You are signed out.</p>')
        },
      },
    },
    // Refresh tokens whenever the client may use the grant (Keycloak's habit), offline_access or not.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // oidc-provider consumes a rotating refresh token before it checks the `resource` of the request against the grant:
    // a refusal (invalid_target) then loses the new refresh token, and the next use of the old one revokes the grant.
    // Here the check comes first, as providers that refuse before rotating do (docs/oidc-notes.md).
    rotateRefreshToken: async (ctx) => {
      const { resource } = ctx.oidc.params
      const granted = ctx.oidc.entities.RefreshToken?.resourceIndicators
      if (typeof resource === 'string' && !granted?.has(resource)) throw new errors.InvalidTarget()
      return options.rotateRefreshToken ?? true
    },
    loadExistingGrant: async (ctx) => {
      // Consent skipped: every configured client is first-party here, so the grant is made (or widened) silently.
      const { client, session, params, provider } = ctx.oidc
      const grantId = ctx.oidc.result?.consent?.grantId || session.grantIdFor(client.clientId)
      const grant = (grantId && await provider.Grant.find(grantId)) || new provider.Grant({ clientId: client.clientId, accountId: session.accountId })
      if (typeof params.scope === 'string') grant.addOIDCScope(params.scope)
      // Each resource the authorization request names (RFC 8707), with every scope its resource server accepts.
      for (const resource of Object.keys(ctx.oidc.resourceServers ?? {})) grant.addResourceScope(resource, resourceServers[resource] ?? '')
      await grant.save()
      return grant
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    ttl: {
      AccessToken: options.accessTokenTtl ?? 30,
      AuthorizationCode: 60,
      IdToken: options.idTokenTtl ?? 300,
      RefreshToken: options.refreshTokenTtl ?? 86_400,
      Session: options.sessionTtl ?? 86_400,
      Grant: options.sessionTtl ?? 86_400,
      Interaction: 600,
    },
    clientBasedCORS: () => false,
    renderError: async (ctx, out) => {
      ctx.type = 'html'
      ctx.body = page('Error', Object.entries(out).map(([key, value]) => `<p><strong>${escapeHtml(key)}</strong>: ${escapeHtml(value)}</p>`).join(''))
    },
    // The provider's own fetch refuses loopback addresses (SSRF protection); the back-channel logout goes to a
    // gateway on 127.0.0.1, so this development provider drops that dispatcher.
    fetch: (url, init) => globalThis.fetch(url, { ...init, dispatcher: undefined }),
  })

  function build() {
    const provider = new Provider(issuer, configuration())
    provider.on('grant.success', (ctx) => {
      const type = ctx.oidc.params.grant_type === TOKEN_EXCHANGE ? 'token_exchange' : ctx.oidc.params.grant_type
      if (type in counters) counters[type]++
      record({ type: `grant.${type}`, clientId: ctx.oidc.client?.clientId, sub: ctx.oidc.account?.accountId })
    })
    provider.on('grant.error', (ctx, error) => {
      counters.grant_error++
      if (error.error_detail === 'refresh token already used') counters.refresh_token_reuse++
      record({ type: 'grant.error', clientId: ctx.oidc.client?.clientId, error: error.error, detail: error.error_detail ?? error.error_description })
      log(`token endpoint refused: ${error.error} (${error.error_detail ?? error.error_description})`)
    })
    provider.on('end_session.success', (ctx) => {
      counters.end_session++
      record({ type: 'end_session', clientId: ctx.oidc.client?.clientId })
    })
    provider.on('backchannel.success', (_ctx, client, sub, sid) => {
      counters.backchannel_success++
      record({ type: 'backchannel.success', clientId: client.clientId, sub, sid })
    })
    provider.on('backchannel.error', (_ctx, error, client, sub, sid) => {
      counters.backchannel_error++
      record({ type: 'backchannel.error', clientId: client.clientId, sub, sid, error: error.message })
      log(`back-channel logout to ${client.backchannelLogoutUri} failed: ${error.message}`)
    })
    provider.on('server_error', (_ctx, error) => log('server error', error))
    provider.registerGrantType(TOKEN_EXCHANGE, exchangeToken(provider), ['subject_token', 'subject_token_type', 'requested_token_type', 'resource', 'scope'])
    // A pre- and post-middleware (the provider's documented extension point) for refusal tests: a token request
    // answered by refuseTokenRequests never reaches the provider (its codes and refresh tokens stay unused); the next
    // successful token response goes through the function given to tamperNextTokenResponse.
    provider.use(async (ctx, next) => {
      if (refusal && ctx.method === 'POST' && ctx.path === '/token') {
        ctx.status = refusal.status
        ctx.body = refusal.body
        if (--refusal.times === 0) refusal = undefined
        return
      }
      await next()
      // How the client authenticated at the token, revocation and PAR endpoints, recorded per request (oidc-provider
      // takes client_secret_basic and client_secret_post for each other; the tests tell them apart here).
      if (ctx.method === 'POST' && CLIENT_AUTH_PATHS.includes(ctx.path)) {
        record({ type: 'client_auth', clientId: ctx.oidc?.client?.clientId, detail: `${ctx.path} ${clientAuthOf(ctx.headers.authorization, ctx.oidc?.body)}`, error: ctx.status >= 400 ? String(ctx.body?.error) : undefined })
      }
      // oidc-provider emits no event for a revocation that succeeded: counted here.
      if (ctx.method === 'POST' && ctx.path === '/token/revocation' && ctx.status === 200) counters.revocation++
      if (tamper && ctx.method === 'POST' && ctx.path === '/token' && ctx.status === 200) {
        const change = tamper
        tamper = undefined
        ctx.body = await change({ ...ctx.body }, { decode: decodeJwt, sign })
      }
    })
    return { provider, callback: provider.callback() }
  }
  /**
   * RFC 8693 token exchange (oidc-provider has none of its own; registered as an extension grant): an access token
   * this provider issued to the same client, still valid, for a JWT access token of one of RESOURCE_SERVERS
   * (`resource`), of the same account and grant. Anything else is refused as the RFC says (invalid_request,
   * invalid_grant, invalid_target).
   */
  function exchangeToken(provider) {
    return async (ctx) => {
      const { client, params } = ctx.oidc
      if (params.subject_token_type !== ACCESS_TOKEN_TYPE) throw new errors.InvalidRequest('subject_token_type must be an access token')
      const subject = typeof params.subject_token === 'string' ? await provider.AccessToken.find(params.subject_token) : undefined
      if (!subject || subject.clientId !== client.clientId) throw new errors.InvalidGrant('subject token invalid or expired')
      const resource = params.resource
      if (typeof resource !== 'string' || resourceServers[resource] === undefined) throw new errors.InvalidTarget()
      const token = new provider.AccessToken({ accountId: subject.accountId, client, grantId: subject.grantId, gty: 'token_exchange', sessionUid: subject.sessionUid, sid: subject.sid })
      token.resourceServer = new provider.ResourceServer(resource, { scope: resourceServers[resource], audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: options.accessTokenTtl ?? 30, jwt: { sign: { alg: 'RS256' } } })
      const value = await token.save()
      ctx.oidc.entity('AccessToken', token)
      ctx.body = { access_token: value, issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'Bearer', expires_in: token.expiration }
    }
  }
  let current = build()

  async function interaction(req, res, uid, action) {
    const { provider } = current
    const details = await provider.interactionDetails(req, res)
    if (details.uid !== uid) throw new Error('interaction mismatch')
    if (action === 'abort') {
      await readForm(req)
      return provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'End-User cancelled the sign-in' }, { mergeWithLastSubmission: false })
    }
    if (details.prompt.name !== 'login') {
      // consent (only if a grant could not cover the request): accept it as loadExistingGrant would.
      return provider.interactionFinished(req, res, {}, { mergeWithLastSubmission: true })
    }
    const mfa = String(details.params.acr_values ?? '').split(' ').includes('mfa')
    if (action === 'login') {
      const form = await readForm(req)
      const user = USERS[form.username]
      if (OIDC_USERNAMES.includes(form.username) && user.password === form.password && (!mfa || form.otp === MFA_CODE)) {
        counters.logins++
        const acr = mfa ? 'mfa' : 'pwd'
        record({ type: 'login', sub: `u-${form.username}`, detail: acr })
        return provider.interactionFinished(req, res, { login: { accountId: `u-${form.username}`, acr, amr: mfa ? ['pwd', 'otp'] : ['pwd'] } }, { mergeWithLastSubmission: false })
      }
      counters.login_failures++
      return sendHtml(res, 200, loginPage(uid, { username: form.username, mfa, error: mfa ? 'Invalid username, password or one-time code.' : 'Invalid username or password.' }))
    }
    sendHtml(res, 200, loginPage(uid, { username: typeof details.params.login_hint === 'string' ? details.params.login_hint : '', mfa }))
  }

  function sendHtml(res, status, html) {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(html) })
    res.end(html)
  }

  server.on('request', (req, res) => {
    const match = /^\/interaction\/([\w-]+)(?:\/(login|abort))?$/.exec(new URL(req.url ?? '/', issuer).pathname)
    if (!match) return current.callback(req, res)
    const action = match[2] ?? 'show'
    if ((action === 'show') !== (req.method === 'GET')) return sendHtml(res, 405, page('Method not allowed', ''))
    interaction(req, res, match[1], action).catch((error) => {
      log('interaction failed:', error.message)
      if (!res.headersSent) sendHtml(res, 400, page('Sign-in expired', '<p>This sign-in request is no longer valid. Start again from the application.</p>'))
    })
  })
  server.keepAliveTimeout = 60_000

  /**
   * Ends the provider sessions of `sub` (an accountId, e.g. 'u-admin') or of one `sid`, as an administrator's
   * "log out" in Keycloak would: a logout token to every client of those sessions that has a backchannel_logout_uri
   * (awaited), then the sessions and their grants (tokens included) are gone. Returns what was sent.
   * @param {{ sub?: string, sid?: string }} target
   */
  async function backchannelLogout(target) {
    const { provider } = current
    const sent = []
    for (const [id, session] of store.sessions()) {
      const authorizations = Object.entries(session.authorizations ?? {})
      const matches = target.sub ? session.accountId === target.sub : authorizations.some(([, entry]) => entry.sid === target.sid)
      if (!matches || !session.accountId) continue
      for (const [clientId, entry] of authorizations) {
        const client = await provider.Client.find(clientId)
        if (client?.backchannelLogoutUri) {
          const delivery = { clientId, sub: session.accountId, sid: entry.sid, ok: true, error: undefined }
          await client.backchannelLogout(session.accountId, entry.sid).then(() => {
            counters.backchannel_success++
          }, (error) => {
            counters.backchannel_error++
            Object.assign(delivery, { ok: false, error: error.message })
          })
          record({ type: delivery.ok ? 'backchannel.success' : 'backchannel.error', clientId, sub: delivery.sub, sid: delivery.sid, error: delivery.error })
          sent.push(delivery)
        }
        if (entry.grantId) {
          await Promise.all([provider.AccessToken, provider.RefreshToken, provider.AuthorizationCode].map(model => model.adapter.revokeByGrantId(entry.grantId)))
          await provider.Grant.adapter.destroy(entry.grantId)
        }
      }
      await provider.Session.adapter.destroy(id)
    }
    return sent
  }

  /**
   * Signs claims as an ID token would be signed: with the current key (default), a key the JWKS does not hold
   * (`'foreign'`, same kid as the current key unless `kid` is given) or none at all (`'none'`: an unsecured JWT).
   * @param {Record<string, unknown>} claims
   * @param {{ key?: 'current' | 'foreign' | 'none', kid?: string }} [how]
   */
  async function sign(claims, how = {}) {
    if (how.key === 'none') return new UnsecuredJWT(claims).encode()
    const jwk = how.key === 'foreign' ? foreignKey : keys[0]
    return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: how.kid ?? keys[0].kid }).sign(await importJWK(jwk, 'RS256'))
  }

  /**
   * Adds a new RS256 signing key and makes it the one that signs from now on; the previous keys stay in the JWKS
   * unless `keepPrevious` is false. Sessions, grants and tokens survive (the provider is rebuilt on the same storage).
   * @returns {string} the new key's kid
   */
  function rotateKeys({ keepPrevious = true } = {}) {
    const key = signingKey()
    keys = keepPrevious ? [key, ...keys] : [key]
    current = build()
    record({ type: 'keys.rotated', detail: key.kid })
    log(`signing key rotated: ${key.kid}`)
    return key.kid
  }

  log(`listening on ${issuer}`)
  return {
    url: issuer,
    issuer,
    port: address.port,
    clients,
    counters,
    events,
    /** Sets every counter to 0 and forgets the events. */
    resetCounters: () => {
      for (const name of Object.keys(counters)) counters[name] = 0
      events.length = 0
    },
    backchannelLogout,
    rotateKeys,
    sign,
    /**
     * The next successful token endpoint response (code or refresh) is replaced by what `change(body, { decode, sign })`
     * returns: e.g. an id_token re-signed with another aud, iss, nonce or exp, unsigned, or signed by a foreign key.
     * @param {(body: any, tools: TamperTools) => any} change
     */
    tamperNextTokenResponse: (change) => {
      tamper = change
    },
    /**
     * The next `times` token requests (code or refresh; Infinity: until called again) are answered with `status` and
     * the JSON `body` (e.g. 400 `{ error: 'invalid_grant' }`, 401 `invalid_client`, a 503) without reaching the
     * provider. Called without a status, token requests reach the provider again.
     * @param {number} [status]
     * @param {Record<string, unknown>} [body]
     * @param {number} [times]
     */
    refuseTokenRequests: (status, body = {}, times = 1) => {
      refusal = status ? { status, body, times } : undefined
    },
    /** The kid that signs now. */
    currentKid: () => keys[0].kid,
    /** The oidc-provider instance (changes on rotateKeys). */
    get provider() {
      return current.provider
    },
    close: () => {
      const closed = new Promise(resolve => server.close(() => resolve(undefined)))
      server.closeAllConnections()
      return closed
    },
    server,
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const origin = process.env.GATEWAY_ORIGIN ?? 'http://127.0.0.1:3000'
  const op = await startDevOidcProvider({
    port: Number(process.env.PORT ?? 4030),
    log: true,
    clients: [gatewayClient({ origin, clientSecret: 'gateway-secret' }), gatewayClient({ origin, clientId: 'gateway-public' })],
  })
  console.log(`
  Development OpenID Provider
  Issuer     ${op.url}   (discovery: ${op.url}/.well-known/openid-configuration)
  Clients    gateway / gateway-secret (client_secret_basic), gateway-public (none, PKCE only)
             for ${origin}: /auth/callback, post-logout ${origin}/, back-channel ${origin}/auth/backchannel-logout
  Accounts   ${OIDC_USERNAMES.map(name => `${name} / ${USERS[name].password}`).join(', ')}
`)
  const stop = () => op.close().finally(() => process.exit(0))
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}
