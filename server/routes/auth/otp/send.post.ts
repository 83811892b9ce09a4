import { parseLoginCredentials } from '../../../core/credentials'
import { MOCK_TRANSACTION_ID } from '../../../core/mock'
import { auditedAttempt } from '../../../utils/audit'
import { useGatewayConfig } from '../../../utils/gateway-config'
import { MESSAGES, RequestError } from '../../../utils/gateway-error'
import { defineGatewayRoute } from '../../../utils/gateway-route'
import { sendIamOtp } from '../../../utils/iam-auth'
import { requireIamBaseUrl } from '../../../utils/iam-client'
import { readJsonObject } from '../../../utils/json-body'
import { limitAttempt } from '../../../utils/login-limits'

/**
 * POST /auth/otp/send: validate, mock, empty-endpoint 400, brute-force limits, then the IAM; answers { transactionId? }.
 * Counted and audited (utils/audit.ts).
 */
export default defineGatewayRoute(event => auditedAttempt(event, 'otp', async (record) => {
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
