import { parseLoginCredentials } from '../../core/credentials'
import { mockUser } from '../../core/mock'
import { useGatewayConfig } from '../../utils/gateway-config'
import { GatewayError, MESSAGES } from '../../utils/gateway-error'
import { defineGatewayRoute } from '../../utils/gateway-route'
import { loginWithIam } from '../../utils/iam-auth'
import { requireIamBaseUrl } from '../../utils/iam-client'
import { readJsonObject } from '../../utils/json-body'
import { limitAttempt } from '../../utils/login-limits'
import { writeGatewaySession } from '../../utils/session-cookie'

/** POST /auth/login: validate, (mock or) brute-force limits, IAM login + user-info, seal svc_session, answer { user }. */
export default defineGatewayRoute(async (event) => {
  const credentials = parseLoginCredentials(await readJsonObject(event))
  if (!credentials) throw new GatewayError(400, MESSAGES.missingCredentials)
  if (useGatewayConfig().config.mock) {
    const user = mockUser(credentials.username)
    writeGatewaySession(event, { user })
    return { user }
  }
  requireIamBaseUrl()
  const session = await limitAttempt(event, credentials.username, true, () => loginWithIam(event, credentials))
  writeGatewaySession(event, session)
  return { user: session.user }
})
