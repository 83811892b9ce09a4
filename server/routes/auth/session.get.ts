import type { SessionResponse } from '../../../shared/types'
import { mockSessionUser } from '../../core/iam/mock'
import { idleEndsAt } from '../../core/session/idle'
import { liveToken, sessionExpiresAt } from '../../core/session/seal'
import { defineGatewayRoute } from '../../http/route'
import { fetchIamUser } from '../../iam/auth'
import { oidcSessionUser } from '../../oidc/token-cache'
import { useGatewayConfig } from '../../ops/config'
import { clearGatewaySession, hasPlantedSession, readGatewaySession } from '../../session/cookie'
import { sessionToken } from '../../session/token'

const NO_SESSION: SessionResponse = { user: null, expiresAt: null }

/**
 * GET /auth/session: the session's user with fresh permissions and when the session ends (ms: the earlier of the
 * 8-hour end and the token's expiry), or `{ user: null, expiresAt: null }`; never an authentication error. With
 * APP_SESSION_IDLE_TIMEOUT on, also `idleExpiresAt`: when it goes idle unless used again (ms; the request itself slid
 * it when due, and the svc_idle cookie of this answer then says the later time).
 */
export default defineGatewayRoute(async (event): Promise<SessionResponse> => {
  const session = readGatewaySession(event)
  if (!session) {
    if (hasPlantedSession(event)) clearGatewaySession(event)
    return NO_SESSION
  }
  const idleExpiresAt = idleEndsAt(session, useGatewayConfig().config.sessionIdleMs)
  const expiresAt = sessionExpiresAt(session)
  const ends = idleExpiresAt === null ? { expiresAt } : { expiresAt, idleExpiresAt }
  if (useGatewayConfig().config.kind === 'oidc') {
    // An OpenID session lives while its tokens do (a refresh the provider refused, a memory store's restart: gone);
    // a provider that does not answer does not end it here.
    const token = await Promise.resolve(sessionToken(session)).catch(() => true)
    // The user as mapped at login, whole (the cookie's copy may have dropped permissions to fit 4 KB).
    return token ? { user: oidcSessionUser(session), ...ends } : NO_SESSION
  }
  const { config } = useGatewayConfig()
  // The mock user's roles and permissions come from the configuration (the cookie's copy may have dropped them).
  if (config.mock) return { user: mockSessionUser(session.user, config.mockUser), ...ends }
  if (!session.accessToken) return { user: session.user, ...ends }
  const token = liveToken(session)
  if (!token) return NO_SESSION
  try {
    return { user: await fetchIamUser(token), ...ends }
  }
  catch {
    return NO_SESSION
  }
})
