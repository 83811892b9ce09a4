import type { SessionResponse } from '../../../shared/types'
import { mockSessionUser } from '../../core/iam/mock'
import { liveToken, sessionExpiresAt } from '../../core/session/seal'
import { defineGatewayRoute } from '../../http/route'
import { fetchIamUser } from '../../iam/auth'
import { oidcSessionUser } from '../../oidc/tokens'
import { useGatewayConfig } from '../../ops/config'
import { clearGatewaySession, hasPlantedSession, readGatewaySession } from '../../session/cookie'
import { sessionToken } from '../../session/token'

const NO_SESSION: SessionResponse = { user: null, expiresAt: null }

/**
 * GET /auth/session: the session's user with fresh permissions and when the session ends (ms: the earlier of the
 * 8-hour end and the token's expiry), or `{ user: null, expiresAt: null }`; never an authentication error.
 */
export default defineGatewayRoute(async (event): Promise<SessionResponse> => {
  const session = readGatewaySession(event)
  if (!session) {
    if (hasPlantedSession(event)) clearGatewaySession(event)
    return NO_SESSION
  }
  const expiresAt = sessionExpiresAt(session)
  if (useGatewayConfig().config.kind === 'oidc') {
    // An OpenID session lives while its tokens do (a refresh the provider refused, a memory store's restart: gone);
    // a provider that does not answer does not end it here.
    const token = await Promise.resolve(sessionToken(session)).catch(() => true)
    // The user as mapped at login, whole (the cookie's copy may have dropped permissions to fit 4 KB).
    return token ? { user: oidcSessionUser(session), expiresAt } : NO_SESSION
  }
  const { config } = useGatewayConfig()
  // The mock user's roles and permissions come from the configuration (the cookie's copy may have dropped them).
  if (config.mock) return { user: mockSessionUser(session.user, config.mockUser), expiresAt }
  if (!session.accessToken) return { user: session.user, expiresAt }
  const token = liveToken(session)
  if (!token) return NO_SESSION
  try {
    return { user: await fetchIamUser(token), expiresAt }
  }
  catch {
    return NO_SESSION
  }
})
