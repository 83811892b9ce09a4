import { parseLoginCredentials } from '../../../core/credentials'
import { MOCK_TRANSACTION_ID } from '../../../core/mock'
import { auditedAttempt } from '../../../lib/audit'
import { useGatewayConfig } from '../../../lib/gateway-config'
import { MESSAGES, RequestError } from '../../../lib/gateway-error'
import { defineGatewayRoute } from '../../../lib/gateway-route'
import { sendIamOtp } from '../../../lib/iam-auth'
import { requireIamBaseUrl } from '../../../lib/iam-client'
import { readJsonObject } from '../../../lib/json-body'
import { limitAttempt } from '../../../lib/login-limits'

/**
 * POST /auth/otp/send: validate, mock, empty-endpoint 400, brute-force limits, then the IAM; answers { transactionId? }.
 * Counted and audited (lib/audit.ts).
 */
export default defineGatewayRoute(event => auditedAttempt(event, 'otp', async (record) => {
  if (useGatewayConfig().config.kind === 'oidc') throw new RequestError(400, MESSAGES.useSso)
  const credentials = parseLoginCredentials(await readJsonObject(event))
  if (!credentials) throw new RequestError(400, MESSAGES.missingCredentials)
  const { config } = useGatewayConfig()
  const { username, password, clientId } = credentials
  record.username = username
  record.application = clientId ?? config.clientId
  if (config.mock) return { transactionId: MOCK_TRANSACTION_ID }
  if (!config.endpoints.otpSend) throw new RequestError(400, MESSAGES.otpNotConfigured)
  requireIamBaseUrl()
  return await limitAttempt(event, username, false, () => sendIamOtp(event, { username, password, clientId }))
}))
