import { parseLoginCredentials } from '../../core/credentials'
import { mockUser } from '../../core/mock'
import { auditedAttempt } from '../../lib/audit'
import { useGatewayConfig } from '../../lib/gateway-config'
import { MESSAGES, RequestError } from '../../lib/gateway-error'
import { defineGatewayRoute } from '../../lib/gateway-route'
import { loginWithIam } from '../../lib/iam-auth'
import { requireIamBaseUrl } from '../../lib/iam-client'
import { readJsonObject } from '../../lib/json-body'
import { limitAttempt } from '../../lib/login-limits'
import { writeGatewaySession } from '../../lib/session-cookie'

/**
 * POST /auth/login: validate, (mock or) brute-force limits, IAM login + user-info, seal svc_session, answer { user }.
 * Counted and audited (lib/audit.ts).
 */
export default defineGatewayRoute(event => auditedAttempt(event, 'login', async (record) => {
  // An OpenID Provider takes the passwords itself: GET /auth/sso.
  if (useGatewayConfig().config.kind === 'oidc') throw new RequestError(400, MESSAGES.useSso)
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
