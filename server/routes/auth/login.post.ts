import { parseLoginCredentials } from '../../core/credentials'
import { mockUser } from '../../core/mock'
import { auditedAttempt } from '../../utils/audit'
import { useGatewayConfig } from '../../utils/gateway-config'
import { MESSAGES, RequestError } from '../../utils/gateway-error'
import { defineGatewayRoute } from '../../utils/gateway-route'
import { loginWithIam } from '../../utils/iam-auth'
import { requireIamBaseUrl } from '../../utils/iam-client'
import { readJsonObject } from '../../utils/json-body'
import { limitAttempt } from '../../utils/login-limits'
import { writeGatewaySession } from '../../utils/session-cookie'

/**
 * POST /auth/login: validate, (mock or) brute-force limits, IAM login + user-info, seal svc_session, answer { user }.
 * Counted and audited (utils/audit.ts).
 */
export default defineGatewayRoute(event => auditedAttempt(event, 'login', async (record) => {
  const credentials = parseLoginCredentials(await readJsonObject(event))
  if (!credentials) throw new RequestError(400, MESSAGES.missingCredentials)
  const { config } = useGatewayConfig()
  record.username = credentials.username
  record.application = credentials.clientId ?? config.clientId
  if (config.mock) {
    const user = mockUser(credentials.username)
    writeGatewaySession(event, { user })
    record.userId = user.id
    return { user }
  }
  requireIamBaseUrl()
  const session = await limitAttempt(event, credentials.username, true, () => loginWithIam(event, credentials))
  writeGatewaySession(event, session)
  record.userId = session.user.id
  return { user: session.user }
}))
