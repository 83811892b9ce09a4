/**
 * iam/: the contract's IAM. Login, user-info, applications and OTP calls with the mapping (this file), over one HTTP
 * client with the envelope rule, timeouts and failures in the contract's words (client.ts).
 * May import: core, ops, http, stores, session. Never oidc/: the two kinds of IAM do not know each other.
 */
import type { H3Event } from 'h3'
import type { AuthClientOption, AuthUser, LoginCredentials, OtpSendRequest } from '../../shared/types'
import { deviceNameFromUserAgent } from '../core/iam/device'
import { getByPath, mapClients, mapExpiresAt, mapIamUser, mapToken, MappingLimitError, MAX_MAPPED_ENTRIES, toScalarText } from '../core/iam/mapping'
import { GatewayError, MESSAGES } from '../http/errors'
import { useGatewayConfig } from '../ops/config'
import { useLogger } from '../ops/logger'
import { useDeviceId } from '../session/cookie'
import { callIam, expectIamSuccess } from './client'

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
  const answer = await callIam({ endpoint: 'userInfo', method: 'POST', path: config.endpoints.userInfo, headers: { authorization: accessToken } })
  try {
    return mapIamUser(expectIamSuccess(answer), config.mapping, login)
  }
  catch (error) {
    if (!(error instanceof MappingLimitError)) throw error
    useLogger().warn({ list: error.list, count: error.count, max: MAX_MAPPED_ENTRIES }, `IAM trả ${error.count} mục ${error.list}, quá giới hạn ${MAX_MAPPED_ENTRIES}: từ chối.`)
    throw new GatewayError(502, MESSAGES.iamTooManyEntries)
  }
}

/** The IAM login, then user-info: the user with full roles and permissions, the token and its expiry. */
export async function loginWithIam(event: H3Event, credentials: LoginCredentials) {
  const { config } = useGatewayConfig()
  const { method } = credentials
  const answer = await callIam({
    endpoint: 'login',
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

/**
 * Tells the IAM of a logout (APP_AUTH_ENDPOINTS_LOGOUT, raw token in `authorization`), without holding the logout:
 * the call runs on its own within the IAM's 10 s limit, and a failure is only logged.
 */
export function notifyIamLogout(accessToken: string): void {
  const { config } = useGatewayConfig()
  if (!config.endpoints.logout || !config.baseURL) return
  callIam({ endpoint: 'logout', method: 'POST', path: config.endpoints.logout, headers: { authorization: accessToken } })
    .then(expectIamSuccess)
    .catch((error: unknown) => {
      const detail = error instanceof GatewayError ? `${error.statusCode} ${error.statusMessage}` : 'lỗi không rõ'
      useLogger().warn(`IAM không nhận được thông báo đăng xuất (${detail}).`)
    })
}

/** Sends an OTP by the messenger method; the transactionId the IAM gave, if any. */
export async function sendIamOtp(event: H3Event, input: OtpSendRequest) {
  const { config } = useGatewayConfig()
  const answer = await callIam({
    endpoint: 'otpSend',
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

let clientsCache: { clients: AuthClientOption[], until: number } | undefined
let clientsInFlight: Promise<AuthClientOption[]> | undefined

/**
 * The applications list from a per-process copy kept APP_AUTH_CLIENTS_CACHE_SECONDS (concurrent misses share one IAM
 * call); a failed call is not kept. 0 turns the copy off: every request calls the IAM.
 */
export function cachedIamClients(): Promise<AuthClientOption[]> {
  const ttlMs = useGatewayConfig().config.clientsCacheSeconds * 1000
  if (ttlMs <= 0) return fetchIamClients()
  if (clientsCache && clientsCache.until > Date.now()) return Promise.resolve(clientsCache.clients)
  clientsInFlight ??= fetchIamClients()
    .then((clients) => {
      clientsCache = { clients, until: Date.now() + ttlMs }
      return clients
    })
    .finally(() => {
      clientsInFlight = undefined
    })
  return clientsInFlight
}

/** The applications list; `status=1` is added when the configured path has no status query. */
async function fetchIamClients(): Promise<AuthClientOption[]> {
  const { config } = useGatewayConfig()
  const path = config.endpoints.clients
  const hasStatus = /[?&]status=/.test(path)
  const answer = await callIam({ endpoint: 'clients', method: 'GET', path: hasStatus ? path : `${path}${path.includes('?') ? '&' : '?'}status=1` })
  return mapClients(expectIamSuccess(answer), config.mapping)
}
