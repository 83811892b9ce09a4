import { GatewayError, MESSAGES } from '../../../http/errors'
import { defineGatewayRoute } from '../../../http/route'
import { readGatewaySession } from '../../../session/cookie'
import { endOtherSessions } from '../../../session/user-sessions'

/**
 * POST /auth/sessions/end-others: ends every other live session of the signed-in user on every instance (the
 * request's own stays) and answers `{ ended }`, how many. 401 without a session.
 */
export default defineGatewayRoute(async (event) => {
  const current = readGatewaySession(event)
  if (!current) throw new GatewayError(401, MESSAGES.verifyNoSession)
  return { ended: await endOtherSessions(event, current) }
})
