import { liveToken } from '../../core/seal'
import { useGatewayConfig } from '../../utils/gateway-config'
import { defineGatewayRoute } from '../../utils/gateway-route'
import { fetchIamUser } from '../../utils/iam-auth'
import { clearGatewaySession, hasPlantedSession, readGatewaySession } from '../../utils/session-cookie'
import type { SessionResponse } from '../../../shared/types'

/** GET /auth/session: the session's user with fresh permissions, or null; never an authentication error. */
export default defineGatewayRoute(async (event): Promise<SessionResponse> => {
  const session = readGatewaySession(event)
  if (!session) {
    if (hasPlantedSession(event)) clearGatewaySession(event)
    return { user: null }
  }
  if (useGatewayConfig().config.mock || !session.accessToken) return { user: session.user }
  const token = liveToken(session)
  if (!token) return { user: null }
  try {
    return { user: await fetchIamUser(token) }
  }
  catch {
    return { user: null }
  }
})
