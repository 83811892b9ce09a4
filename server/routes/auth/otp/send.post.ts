import { parseLoginCredentials } from '../../../core/iam/credentials'
import { MOCK_TRANSACTION_ID } from '../../../core/iam/mock'
import { auditedAttempt } from '../../../http/audit'
import { MESSAGES, RequestError } from '../../../http/errors'
import { readJsonObject } from '../../../http/json-body'
import { defineGatewayRoute } from '../../../http/route'
import { clientAddress } from '../../../http/scope'
import { sendIamOtp } from '../../../iam/auth'
import { requireIamBaseUrl } from '../../../iam/client'
import { useGatewayConfig } from '../../../ops/config'
import { limitAttempt } from '../../../stores/login-limits'

/**
 * POST /auth/otp/send: validate, mock, empty-endpoint 400, brute-force limits, then the IAM; answers { transactionId? }.
 * Counted and audited (http/audit.ts).
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
  return await limitAttempt(clientAddress(event), username, false, () => sendIamOtp(event, { username, password, clientId }))
}))
