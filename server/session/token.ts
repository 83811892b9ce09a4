import { liveToken, type SessionPayload } from '../core/session/seal'
import { useGatewayConfig } from '../ops/config'
import { oidcAccessToken } from '../oidc/tokens'

/**
 * The token a live session sends to the backend: the contract IAM's from the cookie (while it has not expired); an
 * OpenID session's from its token store, renewed when due (a promise then: first use here, or a renewal); none in mock
 * mode or without a session.
 */
export function sessionToken(session: SessionPayload | null, now = Date.now()): string | undefined | Promise<string | undefined> {
  if (!session) return undefined
  if (session.accessToken !== undefined) return liveToken(session, now)
  return useGatewayConfig().config.kind === 'oidc' ? oidcAccessToken(session) : undefined
}
