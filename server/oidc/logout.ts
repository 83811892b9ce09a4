import type { H3Event } from 'h3'
import * as client from 'openid-client'
import type { SessionPayload } from '../core/session/seal'
import { useLogger } from '../ops/logger'
import { postLogoutUriFor } from './origin'
import { oidcReady, refreshingClient, useOidcClient } from './provider'
import { forgetTokens, type TokenRecord } from './token-cache'
import { tokensOf, useTokenStore } from './token-store'

/**
 * Drops an ended OpenID session's tokens (already revoked by the caller), as a logout does: forgotten here, deleted
 * from the store (every instance), its refresh token revoked at the provider when it can. Returns the record that was
 * kept, if any. GET /auth/logout calls it, and so does the ending of a session from its user's list (registered by the
 * start plugin with session/user-sessions.ts's onSessionEnd).
 */
export async function dropSessionTokens(sid: string): Promise<TokenRecord | undefined> {
  const record = await tokensOf(sid).catch(() => undefined)
  forgetTokens(sid)
  if (record) await (await useTokenStore()).delete(record).catch((error: Error) => useLogger().warn({ error: error.message }, 'không xoá được token OIDC trong Redis.'))
  // A refresh token outlives the session at many providers (Keycloak's offline tokens: weeks): revoked when they can.
  if (record?.refreshToken && oidcReady() && useOidcClient().serverMetadata().revocation_endpoint) {
    client.tokenRevocation(refreshingClient(), record.refreshToken, { token_type_hint: 'refresh_token' })
      .catch((error: Error) => useLogger().warn({ error: error.message }, 'không thu hồi được refresh token tại OpenID Provider.'))
  }
  return record
}

/**
 * GET /auth/logout of an OpenID session (already revoked by the route): its tokens dropped (dropSessionTokens), and
 * the provider's logout URL (end_session_endpoint with id_token_hint and post_logout_redirect_uri), or undefined when
 * the provider has none (the browser then goes to the route's `redirect`).
 */
export async function endProviderSession(event: H3Event, session: SessionPayload): Promise<string | undefined> {
  const record = await dropSessionTokens(session.sid)
  if (!oidcReady()) return undefined
  const config = useOidcClient()
  if (!config.serverMetadata().end_session_endpoint) return undefined
  return client.buildEndSessionUrl(config, {
    post_logout_redirect_uri: postLogoutUriFor(event),
    ...(record?.idToken ? { id_token_hint: record.idToken } : { client_id: config.clientMetadata().client_id }),
  }).href
}
