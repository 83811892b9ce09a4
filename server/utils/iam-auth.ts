import type { H3Event } from 'h3'
import type { AuthClientOption, AuthUser, LoginCredentials, OtpSendRequest } from '../../shared/types'
import { deviceNameFromUserAgent } from '../core/device'
import { getByPath, mapClients, mapExpiresAt, mapIamUser, mapToken, toScalarText } from '../core/mapping'
import { useGatewayConfig } from './gateway-config'
import { GatewayError, MESSAGES } from './gateway-error'
import { callIam, expectIamSuccess } from './iam-client'
import { useDeviceId } from './session-cookie'

/** Device fields the IAM requires: one stable id per browser, a readable name, the type. */
function deviceFields(event: H3Event) {
  const deviceId = useDeviceId(event)
  return {
    deviceId,
    deviceUuid: deviceId,
    deviceName: deviceNameFromUserAgent(event.node.req.headers['user-agent']),
    deviceType: 'WEB',
  }
}

/** Calls user-info with the raw token (no 'Bearer' prefix) and maps the user; `login` fills missing fields. */
export async function fetchIamUser(accessToken: string, login?: unknown): Promise<AuthUser> {
  const { config } = useGatewayConfig()
  const answer = await callIam({ method: 'POST', path: config.endpoints.userInfo, headers: { authorization: accessToken } })
  return mapIamUser(expectIamSuccess(answer), config.mapping, login)
}

/** The IAM login, then user-info: the user with full roles and permissions, the token and its expiry. */
export async function loginWithIam(event: H3Event, credentials: LoginCredentials) {
  const { config } = useGatewayConfig()
  const { method } = credentials
  const answer = await callIam({
    method: 'POST',
    path: config.endpoints.login,
    body: {
      username: credentials.username,
      password: credentials.password,
      clientId: credentials.clientId ?? config.clientId,
      ...(credentials.otp ? { otp: credentials.otp } : {}),
      ...(method ? { authenMethod: config.authenMethod[method] } : {}),
      ...(credentials.transactionId ? { transactionId: credentials.transactionId } : {}),
      ...deviceFields(event),
    },
  })
  const login = expectIamSuccess(answer)
  const accessToken = mapToken(login, config.mapping)
  if (!accessToken) throw new GatewayError(500, MESSAGES.tokenMissing)
  const expiresAt = mapExpiresAt(login, config.mapping, Date.now())
  const user = await fetchIamUser(accessToken, login)
  return { user, accessToken, expiresAt }
}

/** Sends an OTP by the messenger method; the transactionId the IAM gave, if any. */
export async function sendIamOtp(event: H3Event, input: OtpSendRequest) {
  const { config } = useGatewayConfig()
  const answer = await callIam({
    method: 'POST',
    path: config.endpoints.otpSend,
    body: {
      username: input.username,
      password: input.password,
      clientId: input.clientId ?? config.clientId,
      authenMethod: config.authenMethod.messenger,
      ...deviceFields(event),
    },
  })
  const transactionId = toScalarText(getByPath(expectIamSuccess(answer), config.mapping.transactionId))
  return transactionId ? { transactionId } : {}
}

/** The applications list; `status=1` is added when the configured path has no status query. */
export async function fetchIamClients(): Promise<AuthClientOption[]> {
  const { config } = useGatewayConfig()
  const path = config.endpoints.clients
  const hasStatus = /[?&]status=/.test(path)
  const answer = await callIam({ method: 'GET', path: hasStatus ? path : `${path}${path.includes('?') ? '&' : '?'}status=1` })
  return mapClients(expectIamSuccess(answer), config.mapping)
}
