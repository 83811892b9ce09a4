import { parseLoginCredentials } from '../../../core/credentials'
import { MOCK_TRANSACTION_ID } from '../../../core/mock'
import { useGatewayConfig } from '../../../utils/gateway-config'
import { GatewayError, MESSAGES } from '../../../utils/gateway-error'
import { defineGatewayRoute } from '../../../utils/gateway-route'
import { sendIamOtp } from '../../../utils/iam-auth'
import { requireIamBaseUrl } from '../../../utils/iam-client'
import { readJsonObject } from '../../../utils/json-body'
import { limitAttempt } from '../../../utils/login-limits'

/** POST /auth/otp/send: validate, mock, empty-endpoint 400, brute-force limits, then the IAM; answers { transactionId? }. */
export default defineGatewayRoute(async (event) => {
  const credentials = parseLoginCredentials(await readJsonObject(event))
  if (!credentials) throw new GatewayError(400, MESSAGES.missingCredentials)
  const { config } = useGatewayConfig()
  if (config.mock) return { transactionId: MOCK_TRANSACTION_ID }
  if (!config.endpoints.otpSend) throw new GatewayError(400, MESSAGES.otpNotConfigured)
  const { username, password, clientId } = credentials
  requireIamBaseUrl()
  return await limitAttempt(event, username, false, () => sendIamOtp(event, { username, password, clientId }))
})
