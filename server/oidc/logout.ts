import { getQuery, type H3Event } from 'h3'
import * as client from 'openid-client'
import { safeRedirect } from '../../shared/redirect'
import { readSingleCookie, serializeCookie } from '../core/session/cookie'
import { sealValue, unsealValue, type SessionPayload } from '../core/session/seal'
import { useGatewayConfig } from '../ops/config'
import { useLogger } from '../ops/logger'
import { hintOnClientRefusal } from './client-auth'
import { postLogoutUriFor } from './origin'
import { oidcReady, refreshingClient, tokenAuthMethod, useOidcClient } from './provider'
import type { TokenRecord } from './token-cache'
import { discardTokens } from './token-store'

/**
 * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0): GET /auth/logout drops each OpenID session's tokens
 * (its refresh token revoked at the provider) and sends the browser to the provider's end_session_endpoint with
 * `client_id`, `id_token_hint`, `post_logout_redirect_uri` and a random `state` kept in a short-lived sealed cookie
 * with the route's `redirect`; the provider sends the browser back to GET /auth/logged-out, which checks the state
 * (when the provider echoes it) and goes on to that `redirect`. Some providers come back only when the request
 * carries a state.
 */

const secure = !import.meta.dev
const LOGOUT_COOKIE = secure ? '__Host-svc_oidc_logout' : 'svc_oidc_logout'
const LOGOUT_TTL_SECONDS = 600
/** The longest `redirect` kept (as for a login trip): a longer one returns to '/'. */
const MAX_REDIRECT = 512

interface LogoutTrip {
  kind: 'oidc-logout'
  state: string
  redirect: string
  iat: number
}

function isLogoutTrip(value: unknown): value is LogoutTrip {
  const trip = value as Partial<LogoutTrip> | null
  return !!trip && trip.kind === 'oidc-logout' && typeof trip.state === 'string' && typeof trip.redirect === 'string' && typeof trip.iat === 'number'
}

/**
 * Drops an ended OpenID session's tokens (already revoked by the caller), as a logout does: forgotten here, deleted
 * from the store (every instance), its refresh token revoked at the provider when it can. Returns the record that was
 * kept, if any. GET /auth/logout calls it (endProviderSession), and so does the ending of a session from its user's
 * list (registered by the start plugin with session/user-sessions.ts's onSessionEnd).
 */
export async function dropSessionTokens(sid: string): Promise<TokenRecord | undefined> {
  const record = await discardTokens(sid)
  // A refresh token outlives the session at many providers (Keycloak's offline tokens: weeks): revoked when they can.
  if (record?.refreshToken && oidcReady() && useOidcClient().serverMetadata().revocation_endpoint) {
    const clientId = useOidcClient().clientMetadata().client_id
    client.tokenRevocation(refreshingClient(), record.refreshToken, { token_type_hint: 'refresh_token' })
      .catch((error: Error) => {
        useLogger().warn({ error: error.message }, 'không thu hồi được refresh token tại OpenID Provider.')
        hintOnClientRefusal(error, tokenAuthMethod(), clientId)
      })
  }
  return record
}

/** GET /auth/logout of an OpenID session: its tokens dropped (dropSessionTokens); its ID token, for the logout hint. */
export async function endProviderSession(session: SessionPayload): Promise<string | undefined> {
  return (await dropSessionTokens(session.sid))?.idToken
}

/**
 * The provider's logout URL, with this browser's logout trip cookie set; undefined when the provider has no
 * end_session_endpoint (or is not discovered yet): the browser then goes to `redirect`, the gateway's own page.
 */
export function providerLogoutUrl(event: H3Event, idToken: string | undefined, redirect: string): string | undefined {
  if (!oidcReady()) return undefined
  const config = useOidcClient()
  if (!config.serverMetadata().end_session_endpoint) return undefined
  const trip: LogoutTrip = { kind: 'oidc-logout', state: client.randomState(), redirect: redirect.length <= MAX_REDIRECT ? redirect : '/', iat: Date.now() }
  event.node.res.appendHeader('set-cookie', serializeCookie(LOGOUT_COOKIE, sealValue(trip, useGatewayConfig().seals.oidcLogout), { maxAgeSeconds: LOGOUT_TTL_SECONDS, secure }))
  return client.buildEndSessionUrl(config, {
    post_logout_redirect_uri: postLogoutUriFor(event),
    client_id: config.clientMetadata().client_id,
    ...(idToken ? { id_token_hint: idToken } : {}),
    state: trip.state,
  }).href
}

/**
 * GET /auth/logged-out: where the browser goes now. The trip's `redirect` when its cookie is there, unexpired, and the
 * provider echoed its state (or none); '/' otherwise (a state that is not this browser's is logged). The cookie goes.
 */
export function finishProviderLogout(event: H3Event): string {
  const sealed = readSingleCookie(event.node.req.headers.cookie, LOGOUT_COOKIE)
  const value = unsealValue(sealed, useGatewayConfig().seals.oidcLogout, 4096)
  const trip = isLogoutTrip(value) && Date.now() - value.iat < LOGOUT_TTL_SECONDS * 1000 ? value : undefined
  if (sealed !== undefined) event.node.res.appendHeader('set-cookie', serializeCookie(LOGOUT_COOKIE, '', { maxAgeSeconds: 0, secure }))
  const { state } = getQuery(event)
  if (!trip) return '/'
  if (state !== undefined && state !== trip.state) {
    useLogger().warn({ type: 'oidc' }, 'state trả về sau khi đăng xuất tại OpenID Provider không khớp với trình duyệt này: về trang chủ.')
    return '/'
  }
  return safeRedirect(trip.redirect)
}
