import { defineGatewayRoute } from '../../../http/route'
import { GatewayError, MESSAGES } from '../../../http/errors'
import { readJsonObject } from '../../../http/json-body'
import { clearGatewaySession, readGatewaySession } from '../../../session/cookie'
import { endOwnSession } from '../../../session/user-sessions'

/**
 * POST /auth/sessions/end with `{ id }` (an id of GET /auth/sessions): ends that session of the signed-in user on
 * every instance (revoked; an OpenID session's tokens dropped) and answers `{ current }`. Ending the request's own
 * session is a logout: its cookie is cleared. An id that names no live session of this user (made up, another user's,
 * already ended) ends nothing: 404. 401 without a session.
 */
export default defineGatewayRoute(async (event) => {
  const current = readGatewaySession(event)
  if (!current) throw new GatewayError(401, MESSAGES.verifyNoSession)
  const body = await readJsonObject(event)
  const ended = await endOwnSession(event, current, body?.id)
  if (!ended) throw new GatewayError(404, MESSAGES.sessionNotFound)
  if (ended.sid !== current.sid) return { current: false }
  // The gate may have slid this session's idle timeout on the way in: its cookie must not outlive the clearing.
  event.node.res.removeHeader('set-cookie')
  clearGatewaySession(event)
  return { current: true }
})
