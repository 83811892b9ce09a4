import { GatewayError, MESSAGES } from '../../../http/errors'
import { defineGatewayRoute } from '../../../http/route'
import { readGatewaySession } from '../../../session/cookie'
import { listOwnSessions } from '../../../session/user-sessions'

/**
 * GET /auth/sessions: the signed-in user's live sessions, `{ sessions: [{ id, createdAt, lastSeenAt, address, device,
 * current }] }`, the request's own first and marked `current: true`. 401 without a session, 503 when Redis does not
 * answer (the contract's error form).
 */
export default defineGatewayRoute(async (event) => {
  const current = readGatewaySession(event)
  if (!current) throw new GatewayError(401, MESSAGES.verifyNoSession)
  return { sessions: await listOwnSessions(event, current) }
})
