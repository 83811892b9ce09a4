import type { H3Event } from 'h3'
import * as client from 'openid-client'
import type { SessionPayload } from '../core/session/seal'
import { useLogger } from '../ops/logger'
import { postLogoutUriFor } from './origin'
import { hintOnClientRefusal } from './client-auth'
import { oidcReady, refreshingClient, tokenAuthMethod, useOidcClient } from './provider'
import { useTokenStore } from './token-store'
import { forgetTokens, tokensOf } from './tokens'

/**
 * GET /auth/logout of an OpenID session (already revoked by the route): its tokens dropped from the store, and the
 * provider's logout URL (end_session_endpoint with id_token_hint and post_logout_redirect_uri), or undefined when the
 * provider has none (the browser then goes to the route's `redirect`).
 */
export async function endProviderSession(event: H3Event, session: SessionPayload): Promise<string | undefined> {
  const record = await tokensOf(session.sid).catch(() => undefined)
  forgetTokens(session.sid)
  if (record) await (await useTokenStore()).delete(record).catch((error: Error) => useLogger().warn({ error: error.message }, 'không xoá được token OIDC trong Redis.'))
  if (!oidcReady()) return undefined
  const config = useOidcClient()
  // A refresh token outlives the session at many providers (Keycloak's offline tokens: weeks): revoked when they can.
  if (record?.refreshToken && config.serverMetadata().revocation_endpoint) {
    client.tokenRevocation(refreshingClient(), record.refreshToken, { token_type_hint: 'refresh_token' })
      .catch((error: Error) => {
        useLogger().warn({ error: error.message }, 'không thu hồi được refresh token tại OpenID Provider.')
        hintOnClientRefusal(error, tokenAuthMethod(), config.clientMetadata().client_id)
      })
  }
  if (!config.serverMetadata().end_session_endpoint) return undefined
  return client.buildEndSessionUrl(config, {
    post_logout_redirect_uri: postLogoutUriFor(event),
    ...(record?.idToken ? { id_token_hint: record.idToken } : { client_id: config.clientMetadata().client_id }),
  }).href
}
