import { getQuery, type H3Event } from 'h3'
import * as client from 'openid-client'
import { safeRedirect } from '../../shared/redirect'
import { mapIamUser, MappingLimitError } from '../core/iam/mapping'
import type { AuthLevelNeed } from '../core/session/auth-level'
import { COOKIE_BUDGET_BYTES, readSingleCookie, serializeCookie, setCookieLineBytes } from '../core/session/cookie'
import { sessionEndsAt, sealValue, unsealValue, type SessionPayload } from '../core/session/seal'
import { audit } from '../http/audit'
import { GatewayError, MESSAGES } from '../http/errors'
import { useGatewayConfig } from '../ops/config'
import { useLogger } from '../ops/logger'
import { clearGatewaySession, readEverySession, sealGatewaySession } from '../session/cookie'
import { revokeSession } from '../session/revocations'
import { redirectUriFor } from './origin'
import { hintOnClientRefusal } from './client-auth'
import { oidcSettings, rediscoverOidc, tokenAuthMethod, useOidcClient } from './provider'
import { claimsMeetNeed, needParameters, tripNeed } from './step-up'
import { expiryOf } from './token-cache'
import { discardTokens, keepTokens } from './token-store'

/**
 * The browser's trip to the OpenID Provider and back (authorization code + PKCE S256, `state` and `nonce`):
 * GET /auth/sso sends it there with a short-lived sealed cookie that binds the trip to this browser; GET /auth/callback
 * checks the answer against that cookie (openid-client: state, the code exchange with the PKCE verifier, the ID token's
 * signature by the provider's JWKS, iss, aud, azp, nonce, exp/iat with 30 s of clock skew), maps the user from the ID
 * token and userinfo claims (APP_AUTH_MAPPING_*), seals the session and keeps the tokens beside it.
 */

/**
 * The trips under way in this browser: one sealed cookie, the newest MAX_TRIPS of them (two tabs logging in at once do
 * not undo each other; a flood of /auth/sso cannot grow the Cookie header). `__Host-`: Secure, Path=/, no Domain, so
 * neither a sibling subdomain nor a plain-http man in the middle can plant a trip of theirs (a login of their account
 * in this browser). Under `nuxt dev` (http) the prefix cannot be used.
 */
const secure = !import.meta.dev
const FLOW_COOKIE = secure ? '__Host-svc_oidc' : 'svc_oidc'
const FLOW_TTL_SECONDS = 600
const MAX_TRIPS = 3
/**
 * The longest place to return to (path and query, resolved) a trip keeps; a longer one returns to '/'. JSON doubles a
 * backslash: an uncapped link could make one trip nearly fill the 4 KB a browser keeps of a cookie.
 */
const MAX_TRIP_REDIRECT = 512
/** openid-client's randomState(): 32 random bytes, base64url. */
const STATE_PATTERN = /^[\w-]{43}$/

interface Flow {
  kind: 'oidc-login'
  state: string
  nonce: string
  verifier: string
  redirect: string
  redirectUri: string
  iat: number
  /** This trip follows one whose ID token was signed by a key we did not hold yet (see finishProviderLogin). */
  retried: boolean
  /** The login level asked for (step-up, or APP_OIDC_ACR_VALUES / APP_OIDC_MAX_AGE), checked at the callback. */
  need?: AuthLevelNeed
}

function isFlow(value: unknown): value is Flow {
  const flow = value as Partial<Flow> | null
  return !!flow && flow.kind === 'oidc-login' && typeof flow.state === 'string' && typeof flow.nonce === 'string'
    && typeof flow.verifier === 'string' && typeof flow.redirect === 'string' && typeof flow.redirectUri === 'string' && typeof flow.iat === 'number'
}

/** The browser's trips still under way (sealed, well formed, not expired), newest first. */
function readTrips(event: H3Event): Flow[] {
  const value = unsealValue(readSingleCookie(event.node.req.headers.cookie, FLOW_COOKIE), useGatewayConfig().seals.oidcTrip, 8192)
  const now = Date.now()
  return Array.isArray(value) ? value.filter((flow): flow is Flow => isFlow(flow) && now - flow.iat < FLOW_TTL_SECONDS * 1000).slice(0, MAX_TRIPS) : []
}

/** The trips cookie's Set-Cookie value (a clearing one when no trip is left). */
function tripsCookie(trips: Flow[]): string {
  const value = trips.length ? sealValue(trips, useGatewayConfig().seals.oidcTrip) : ''
  return serializeCookie(FLOW_COOKIE, value, { maxAgeSeconds: trips.length ? FLOW_TTL_SECONDS : 0, secure })
}

/**
 * Sets the trips cookie, newest trip first. A Set-Cookie line over what browsers keep (4,096 bytes, counted after
 * sealing) would be dropped silently and every trip with it: the oldest trips go until it fits.
 */
function writeTrips(event: H3Event, trips: Flow[]): void {
  let kept = trips
  let line = tripsCookie(kept)
  while (kept.length > 1 && setCookieLineBytes(line) > COOKIE_BUDGET_BYTES) {
    kept = kept.slice(0, -1)
    line = tripsCookie(kept)
  }
  if (setCookieLineBytes(line) > COOKIE_BUDGET_BYTES) {
    // One trip alone: only a Host header of kilobytes makes it this long (the redirect is capped).
    useLogger().error(`cookie ${FLOW_COOKIE} cần ${setCookieLineBytes(line)} byte, vượt giới hạn ${COOKIE_BUDGET_BYTES} byte.`)
    throw new GatewayError(500, MESSAGES.cookieTooLarge)
  }
  event.node.res.appendHeader('set-cookie', line)
}

/** Where a trip returns to: the one redirect rule's path, '/' when it is longer than MAX_TRIP_REDIRECT. */
function tripRedirect(value: unknown): string {
  const path = safeRedirect(value)
  return path.length <= MAX_TRIP_REDIRECT ? path : '/'
}

/** GET /auth/sso: the provider's authorization URL for this browser, with the trip's cookie set. */
export async function startProviderLogin(event: H3Event): Promise<string> {
  const config = useOidcClient()
  const settings = oidcSettings()
  const flow: Flow = {
    kind: 'oidc-login',
    state: client.randomState(),
    nonce: client.randomNonce(),
    verifier: client.randomPKCECodeVerifier(),
    redirect: tripRedirect(getQuery(event).redirect),
    redirectUri: redirectUriFor(event),
    iat: Date.now(),
    retried: getQuery(event).retry === '1',
  }
  const { need, stepUp } = tripNeed(event)
  if (need) flow.need = need
  const parameters = new URLSearchParams({
    ...needParameters(need, stepUp),
    redirect_uri: flow.redirectUri,
    scope: settings.scopes,
    code_challenge: await client.calculatePKCECodeChallenge(flow.verifier),
    code_challenge_method: 'S256',
    state: flow.state,
    nonce: flow.nonce,
  })
  // The resources of the routes' audiences (RFC 8707 2.1): the grant covers them, and each route's token is asked for
  // with the session's refresh token when first needed.
  for (const resource of new Set(useGatewayConfig().routes.map(route => route.audience?.resource))) {
    if (resource) parameters.append('resource', resource)
  }
  const url = settings.par || config.serverMetadata().require_pushed_authorization_requests
    ? await pushedAuthorizationUrl(config, parameters, flow.redirect)
    : client.buildAuthorizationUrl(config, parameters)
  writeTrips(event, [flow, ...readTrips(event)].slice(0, MAX_TRIPS))
  return url.href
}

/**
 * PAR (RFC 9126): the parameters posted to the provider's pushed_authorization_request_endpoint, authenticated as the
 * token requests are; the browser's URL carries only client_id and request_uri. A refusal is ssoFailed (with the
 * client hint when it is the client's), no answer ssoUnavailable.
 */
async function pushedAuthorizationUrl(config: client.Configuration, parameters: URLSearchParams, redirect: string): Promise<URL> {
  try {
    return await client.buildAuthorizationUrlWithPAR(config, parameters)
  }
  catch (error) {
    hintOnClientRefusal(error, tokenAuthMethod(), oidcSettings().clientId)
    const refused = error instanceof client.ResponseBodyError || error instanceof client.WWWAuthenticateChallengeError
    throw new ProviderLoginError(refused ? 'ssoFailed' : 'ssoUnavailable', redirect, `PAR: ${(error as Error).name}: ${(error as Error).message}`)
  }
}

/**
 * Why a trip ended on the login page: the key of its message (shared/messages: ssoDenied, ssoExpired, ssoFailed,
 * ssoUnavailable); or 'retry': start one new trip at once (the provider's session makes it a round trip).
 */
export type LoginFailure = 'ssoDenied' | 'ssoExpired' | 'ssoFailed' | 'ssoUnavailable' | 'retry'

export class ProviderLoginError extends Error {
  constructor(readonly reason: LoginFailure, readonly redirect: string, detail: string) {
    super(detail)
  }
}

/**
 * GET /auth/callback: the session of a trip that comes back right (sealed and sent), and the page to return to. Anything else throws
 * ProviderLoginError (the route sends the browser to the login page with its message): never a 500, never a loop.
 */
export async function finishProviderLogin(event: H3Event): Promise<{ location: string, session: SessionPayload }> {
  const query = getQuery(event)
  const state = typeof query.state === 'string' && STATE_PATTERN.test(query.state) ? query.state : ''
  const trips = readTrips(event)
  const flow = state ? trips.find(trip => trip.state === state) : undefined
  if (!flow) throw new ProviderLoginError('ssoExpired', '/', 'no trip of this browser for this state')
  // A trip is used once, whatever happens next.
  writeTrips(event, trips.filter(trip => trip !== flow))
  if (typeof query.error === 'string') {
    throw new ProviderLoginError(query.error === 'access_denied' ? 'ssoDenied' : 'ssoFailed', flow.redirect, `provider error ${query.error}`)
  }
  const config = useOidcClient()
  const currentUrl = new URL(flow.redirectUri)
  currentUrl.search = new URLSearchParams(Object.entries(query).filter(([, value]) => typeof value === 'string') as Array<[string, string]>).toString()
  let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>
  try {
    tokens = await client.authorizationCodeGrant(config, currentUrl, { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce, idTokenExpected: true })
  }
  catch (error) {
    const { error: code, code: clientCode } = error as { error?: string, code?: string }
    const detail = `${(error as Error).name}: ${(error as Error).message}${code ? ` (${code})` : ''}${clientCode ? ` [${clientCode}]` : ''}`
    hintOnClientRefusal(error, tokenAuthMethod(), oidcSettings().clientId)
    // A key our copy of the JWKS does not hold: the provider may have rotated its keys (openid-client fetches them
    // again only when its copy is a minute old). The configuration is read again, and the browser makes one new trip
    // (the code is spent); a second failure is a failure.
    if (clientCode === 'OAUTH_KEY_SELECTION_FAILED' && !flow.retried) {
      await rediscoverOidc()
      throw new ProviderLoginError('retry', flow.redirect, detail)
    }
    throw new ProviderLoginError(code === 'invalid_grant' ? 'ssoExpired' : 'ssoFailed', flow.redirect, detail)
  }
  const claims = tokens.claims()!
  if (!claimsMeetNeed(claims, flow.need)) {
    throw new ProviderLoginError('ssoFailed', flow.redirect, `the provider's login does not meet acr ${flow.need!.acr.join(' ') || '-'} / max_age ${flow.need!.maxAge ?? '-'} (acr ${String(claims.acr)}, auth_time ${String(claims.auth_time)})`)
  }
  let userinfo: Record<string, unknown> = {}
  if (config.serverMetadata().userinfo_endpoint) {
    userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub).catch((error: Error) => {
      useLogger().warn({ error: error.message }, 'không đọc được userinfo của OpenID Provider: dùng claims của ID token.')
      return {}
    }) as Record<string, unknown>
  }
  let user
  try {
    user = mapIamUser(userinfo, useGatewayConfig().config.mapping, claims)
  }
  catch (error) {
    if (error instanceof MappingLimitError) throw new ProviderLoginError('ssoFailed', flow.redirect, error.message)
    throw error
  }
  if (!user.id) user.id = claims.sub
  const now = Date.now()
  // Sealed now, sent only once its tokens are kept: a session without them never leaves the gateway.
  const { payload: session, setCookie, idleHint } = sealGatewaySession({ user })
  const kept = keepTokens({
    sid: session.sid,
    iat: session.iat,
    userId: user.id,
    user,
    sub: claims.sub,
    ...(typeof claims.sid === 'string' ? { providerSid: claims.sid } : {}),
    accessToken: tokens.access_token,
    ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}),
    ...(tokens.id_token ? { idToken: tokens.id_token } : {}),
    expiresAt: expiryOf(tokens, now, sessionEndsAt(session)),
    obtainedAt: now,
    generation: 0,
    ...(typeof claims.acr === 'string' ? { acr: claims.acr } : {}),
    ...(typeof claims.auth_time === 'number' ? { authTime: claims.auth_time } : {}),
  })
  // Without its tokens (Redis did not take them) there is no session: the browser's svc_session is cleared.
  await kept.catch((error: Error) => {
    clearGatewaySession(event)
    throw new ProviderLoginError('ssoFailed', flow.redirect, `tokens not kept: ${error.message}`)
  })
  // The browser's earlier session ends; another user's lands on '/' (a new login, never a silent switch of user).
  const others = await retireEarlierSessions(readEverySession(event), user.id)
  for (const other of others) audit(event, 'logout', { userId: other.user.id, name: other.user.name, reason: 'another user logged in' })
  const redirect = others.length ? '/' : flow.redirect
  event.node.res.appendHeader('set-cookie', setCookie)
  if (idleHint) event.node.res.appendHeader('set-cookie', idleHint)
  audit(event, 'login.success', { username: user.email || user.id, userId: user.id, provider: oidcSettings().issuer, ...(typeof claims.acr === 'string' ? { acr: claims.acr } : {}) })
  return { location: redirect, session }
}

/**
 * Ends the sessions this browser held before a new login (a step-up makes a new session): each is revoked and its
 * tokens dropped here (not revoked at the provider: its grant may be the new session's too). Those of another user
 * come back (for the audit).
 */
async function retireEarlierSessions(sessions: SessionPayload[], userId: string): Promise<SessionPayload[]> {
  const others: SessionPayload[] = []
  for (const session of sessions) {
    await discardTokens(session.sid)
    await revokeSession(session)
    if (session.user.id !== userId) others.push(session)
  }
  return others
}
