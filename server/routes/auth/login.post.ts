import { parseLoginCredentials } from '../../core/iam/credentials'
import { mockUser } from '../../core/iam/mock'
import { auditedAttempt } from '../../http/audit'
import { MESSAGES, RequestError } from '../../http/errors'
import { readJsonObject } from '../../http/json-body'
import { defineGatewayRoute } from '../../http/route'
import { clientAddress } from '../../http/scope'
import { loginWithIam } from '../../iam/auth'
import { requireIamBaseUrl } from '../../iam/client'
import { useGatewayConfig } from '../../ops/config'
import { writeGatewaySession } from '../../session/cookie'
import { recordSession } from '../../session/user-sessions'
import { limitAttempt } from '../../stores/login-limits'

/**
 * POST /auth/login: validate, (mock or) brute-force limits, IAM login + user-info, seal svc_session, write it
 * into its user's list of sessions (past APP_SESSION_MAX_PER_USER the oldest end), answer { user }.
 * Counted and audited (http/audit.ts).
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
    const user = mockUser(credentials.username, config.mockUser)
    await recordSession(event, writeGatewaySession(event, { user }))
    record.userId = user.id
    return { user }
  }
  requireIamBaseUrl()
  const session = await limitAttempt(clientAddress(event), credentials.username, true, () => loginWithIam(event, credentials))
  await recordSession(event, writeGatewaySession(event, session))
  record.userId = session.user.id
  return { user: session.user }
}))
