/**
 * Coercion and validation of the gateway's configuration, in one place.
 * Defaults are written once, in defaults.ts (shipped as `runtimeConfig.svcGateway` by nuxt.config.ts); every key is overridden by its `APP_*` variable,
 * read here as raw text (overlayEnv), so the app's own settings and NUXT_* variables stay the app's. Values may also
 * arrive parsed from the app's config ('1' the number 1, 'true' the boolean). Pure: no h3 or Nitro imports.
 */

import { GATEWAY_DEFAULTS as D } from './defaults'
import { oidcMapping, parseOidcConfig, type OidcConfig } from './oidc-config'
import { checkTrustList, type ProxyTrust } from '../http/forwarding'

export interface IamMapping {
  token: string
  expiresIn: string
  id: string
  name: string
  email: string
  roles: string
  permissions: string
  roleKey: string
  permissionKey: string
  /** '' disables the type filter. */
  permissionType: string
  permissionTypeKey: string
  clients: string
  clientId: string
  clientCode: string
  clientName: string
  transactionId: string
}

export interface GatewayConfig {
  /** 'iam': the contract's IAM; 'oidc': an OpenID Provider (`oidc` holds its settings). */
  kind: 'iam' | 'oidc'
  /** Set when kind is 'oidc'. */
  oidc?: OidcConfig
  mock: boolean
  /** IAM base address without a trailing '/'; '' when not configured. */
  baseURL: string
  /** Application code used when a request carries no clientId. */
  clientId: string
  /** Seconds a successful applications list is kept; 0: not kept. */
  clientsCacheSeconds: number
  /** Seconds each IAM call may take (the contract's 10). */
  iamTimeoutSeconds: number
  endpoints: { login: string, userInfo: string, clients: string, otpSend: string, logout: string }
  mapping: IamMapping
  authenMethod: { authenticator: string, messenger: string }
  /** Current secret first, then the previous ones (read only). */
  secrets: string[]
  /** Backend address without a trailing '/'; '' when not configured. */
  apiProxyTarget: string
  apiProxyTimeout: number
  /** /api request bodies: the idle limit (ms), the cap per client address (0: none). */
  apiUploads: { idleMs: number, perClient: number }
  /** The backend's connection pool: its size, and how long a request waits for a connection (ms) before 503. */
  apiPool: { connections: number, waitMs: number }
  /** Seconds the body of POST /auth/login or /auth/otp/send may take to arrive after its headers. */
  authBodyTimeoutSeconds: number
  trustedOrigins: string[]
  /** Number of reverse proxies in front of the gateway. */
  trustProxy: ProxyTrust
  rateLimit: { perUser: number, perIp: number, windowSeconds: number, maxKeys: number }
  redisUrl: string
  /** File where revocations Redis never took are kept across a restart of this instance; '' turns it off. */
  revocationJournal: string
  logging: LoggingConfig
  /** Metrics listener; port 0 turns it off. */
  metrics: { port: number, host: string }
  /** Seconds in-flight requests get to finish after SIGTERM. */
  shutdownTimeoutSeconds: number
  /** Seconds an idle keep-alive connection from a client is kept open (Node's `server.keepAliveTimeout`). */
  keepAliveTimeoutSeconds: number
  /** WebSocket tunnels open at most per session and per client address (0: no limit). */
  webSocketLimits: { perSession: number, perClient: number }
  /** Keep one of Node's nextTick entries alive for the life of the process (opt-in; ops/tick-shape.ts). */
  keepTickShape: boolean
  /** GET /auth/verify passes the IAM token on (APP_VERIFY_PASS_TOKEN). */
  verifyPassToken: boolean
}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

export interface LoggingConfig {
  level: LogLevel
  format: 'json' | 'pretty'
  /** One line per request. */
  access: boolean
}

/** Raised for a configuration that cannot work; the message names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

export const MIN_SECRET_LENGTH = 32

/** The runtimeConfig subtree the layer declares (see nuxt.config.ts); every leaf may arrive as any JSON value. */
export interface RawGatewayConfig {
  auth?: Record<string, unknown>
  oidc?: Record<string, unknown>
  session?: Record<string, unknown>
  apiProxyTarget?: unknown
  apiProxyTimeout?: unknown
  apiBodyIdleTimeout?: unknown
  apiUploadsPerClient?: unknown
  apiProxyConnections?: unknown
  apiPoolWait?: unknown
  authBodyTimeout?: unknown
  trustedOrigins?: unknown
  trustProxy?: unknown
  rateLimit?: Record<string, unknown>
  redisUrl?: unknown
  revocationJournal?: unknown
  logLevel?: unknown
  logFormat?: unknown
  accessLog?: unknown
  metricsPort?: unknown
  metricsHost?: unknown
  shutdownTimeout?: unknown
  keepAliveTimeout?: unknown
  wsMaxPerSession?: unknown
  wsMaxPerClient?: unknown
  keepTickShape?: unknown
  verifyPassToken?: unknown
}

/** The APP_* variable of a key path under runtimeConfig.svcGateway: ['auth', 'baseURL'] is APP_AUTH_BASE_URL. */
export function envName(path: readonly string[]): string {
  return `APP_${path.map(part => part.replace(/([a-z\d])([A-Z])/g, '$1_$2').toUpperCase()).join('_')}`
}

/**
 * A copy of the configuration tree with each leaf replaced by its APP_* variable when that is set (raw text; the
 * parsers below coerce it). Keys that are not in the tree have no variable.
 */
export function overlayEnv(tree: Record<string, unknown>, env: Record<string, string | undefined>, path: string[] = []): Record<string, unknown> {
  const copy: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(tree)) {
    const at = [...path, key]
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      copy[key] = overlayEnv(value as Record<string, unknown>, env, at)
      continue
    }
    const variable = env[envName(at)]
    copy[key] = variable === undefined ? value : variable
  }
  return copy
}

/** A string setting: numbers are turned into text, null/undefined/objects into the default. */
export function toText(value: unknown, fallback = ''): string {
  if (typeof value === 'string') return value.trim()
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return fallback
}

/** A boolean setting: true/false/1/0/yes/no/on/off/'' (false). */
export function toBool(value: unknown, variable: string): boolean {
  if (typeof value === 'boolean') return value
  if (value === undefined || value === null || value === '') return false
  const text = String(value).trim().toLowerCase()
  if (['true', '1', 'yes', 'on'].includes(text)) return true
  if (['false', '0', 'no', 'off'].includes(text)) return false
  throw new ConfigError(`${variable} phải là true hoặc false (nhận được '${String(value)}').`)
}

/** A whole number setting, at least `min` (and at most `max`, when given). '' gives the default. */
export function toInt(value: unknown, fallback: number, variable: string, min = 0, max?: number): number {
  if (value === undefined || value === null || value === '') return fallback
  const number = typeof value === 'number' ? value : Number(String(value).trim())
  if (!Number.isInteger(number) || number < min) {
    throw new ConfigError(`${variable} phải là số nguyên >= ${min} (nhận được '${String(value)}').`)
  }
  if (max !== undefined && number > max) {
    throw new ConfigError(`${variable} phải là số nguyên từ ${min} đến ${max} (nhận được '${String(value)}').`)
  }
  return number
}

/** The longest a time limit in seconds may be: past ~24.8 days Node's timers fire at once instead. */
const MAX_LIMIT_SECONDS = 3_600

/**
 * APP_TRUST_PROXY: false/0 (default), true (= 1), how many reverse proxies stand in front, or the addresses and networks
 * they connect from, comma-separated (`10.0.0.0/8, loopback`: CIDR, an address, or `loopback`, `linklocal`,
 * `uniquelocal`). A list believes a hop only when it comes from one of them, whatever the request says.
 */
export function toProxyTrust(value: unknown): ProxyTrust {
  if (value === true) return 1
  if (value === false) return 0
  if (!Array.isArray(value)) {
    const text = toText(value).toLowerCase()
    if (text === 'true') return 1
    if (text === 'false' || text === '') return 0
    if (typeof value === 'number' || /^\d+$/.test(text)) return toInt(value, 0, 'APP_TRUST_PROXY')
  }
  const list = toList(value)
  try {
    checkTrustList(list)
  }
  catch (error) {
    throw new ConfigError(`APP_TRUST_PROXY phải là true, false, số proxy đứng trước (số nguyên >= 0) hoặc danh sách địa chỉ/mạng CIDR của chúng (vd. 10.0.0.0/8, loopback): ${(error as Error).message} (nhận được '${String(value)}').`)
  }
  return list
}

/** A comma-separated list; arrays are accepted as they are. */
export function toList(value: unknown): string[] {
  const items = Array.isArray(value) ? value.map(item => toText(item)) : toText(value).split(',')
  return items.map(item => item.trim()).filter(Boolean)
}

/**
 * A Redis address for ioredis (redis:// or rediss://, credentials percent-encoded), or '' for none. The message never
 * repeats the value: it may hold a password.
 */
export function toRedisUrl(value: unknown, variable: string): string {
  const text = toText(value)
  if (!text) return ''
  let url: URL
  try {
    url = new URL(text)
    decodeURIComponent(url.username)
    decodeURIComponent(url.password)
  }
  catch {
    throw new ConfigError(`${variable} không phải địa chỉ Redis hợp lệ (redis://[:mật-khẩu@]máy[:cổng][/số-db], ký tự đặc biệt trong mật khẩu phải mã hoá %).`)
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new ConfigError(`${variable} phải bắt đầu bằng redis:// hoặc rediss://.`)
  if (!url.hostname) throw new ConfigError(`${variable} thiếu tên máy Redis.`)
  return text
}

/** An http(s) base address without a trailing '/', or '' when empty. */
export function toBaseUrl(value: unknown, variable: string): string {
  const text = toText(value)
  if (!text) return ''
  let url: URL
  try {
    url = new URL(text)
  }
  catch {
    throw new ConfigError(`${variable} không phải địa chỉ URL hợp lệ.`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${variable} phải bắt đầu bằng http:// hoặc https://.`)
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new ConfigError(`${variable} không được chứa query, fragment hay thông tin đăng nhập.`)
  }
  return text.replace(/\/+$/, '')
}

/** An endpoint path, '' when disabled; a missing leading '/' is added. */
function toEndpoint(value: unknown, fallback: string): string {
  const text = toText(value, fallback)
  if (!text) return ''
  return text.startsWith('/') ? text : `/${text}`
}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

/** One of a fixed set of words (case-insensitive); '' gives the default. */
function toChoice<T extends string>(value: unknown, choices: readonly T[], fallback: T, variable: string): T {
  const text = toText(value).toLowerCase()
  if (!text) return fallback
  if ((choices as readonly string[]).includes(text)) return text as T
  throw new ConfigError(`${variable} phải là một trong ${choices.join(', ')} (nhận được '${String(value)}').`)
}

/** APP_LOG_LEVEL, APP_LOG_FORMAT and APP_ACCESS_LOG alone: the logger exists before the rest is checked. */
export function parseLoggingConfig(raw: RawGatewayConfig): LoggingConfig {
  return {
    level: toChoice(raw.logLevel, LOG_LEVELS, D.logLevel as LogLevel, 'APP_LOG_LEVEL'),
    format: toChoice(raw.logFormat, ['json', 'pretty'] as const, D.logFormat as 'json', 'APP_LOG_FORMAT'),
    access: raw.accessLog === undefined || raw.accessLog === '' ? D.accessLog : toBool(raw.accessLog, 'APP_ACCESS_LOG'),
  }
}

/** APP_METRICS_PORT: '' (off) or a TCP port. */
function toPort(value: unknown, variable: string): number {
  const port = toInt(value, 0, variable)
  if (port > 65_535) throw new ConfigError(`${variable} phải là số cổng từ 1 đến 65535 (nhận được '${String(value)}').`)
  return port
}

/** Reads the session secrets; raises when the current one is missing or short. */
export function readSecrets(current: unknown, previous: unknown): string[] {
  const secret = toText(current)
  if (secret.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(
      `APP_SESSION_SECRET ${secret ? 'quá ngắn' : 'chưa cấu hình'}: cần ít nhất ${MIN_SECRET_LENGTH} ký tự.`,
    )
  }
  return [secret, ...toList(previous).filter(old => old !== secret)]
}

/**
 * Parses the whole configuration. `secrets` are passed in already read,
 * so that `nuxt dev` can use a random per-process key.
 */
export function parseGatewayConfig(raw: RawGatewayConfig, secrets: string[]): GatewayConfig {
  const auth = raw.auth ?? {}
  const endpoints = (auth.endpoints ?? {}) as Record<string, unknown>
  const mapping = (auth.mapping ?? {}) as Record<string, unknown>
  const authenMethod = (auth.authenMethod ?? {}) as Record<string, unknown>
  const rateLimit = raw.rateLimit ?? {}
  const path = (key: string, fallback: string) => toText(mapping[key], fallback)

  const kind = toChoice(auth.kind, ['iam', 'oidc'] as const, 'iam', 'APP_AUTH_KIND')
  const mock = toBool(auth.mock, 'APP_AUTH_MOCK')
  if (kind === 'oidc' && mock) throw new ConfigError('APP_AUTH_MOCK=true không dùng được với APP_AUTH_KIND=oidc: chọn một.')
  const oidcRaw = raw.oidc ?? {}
  const oidc = kind === 'oidc'
    ? parseOidcConfig(Object.fromEntries(Object.entries(oidcRaw).map(([key, value]) => [key, toText(value)])),
        toBool(oidcRaw.autoRedirect, 'APP_OIDC_AUTO_REDIRECT'), message => new ConfigError(message))
    : undefined

  return {
    kind,
    ...(oidc ? { oidc } : {}),
    mock,
    baseURL: toBaseUrl(auth.baseURL, 'APP_AUTH_BASE_URL'),
    clientId: toText(auth.clientId),
    clientsCacheSeconds: toInt(auth.clientsCacheSeconds, D.auth.clientsCacheSeconds, 'APP_AUTH_CLIENTS_CACHE_SECONDS'),
    iamTimeoutSeconds: toInt(auth.timeout, D.auth.timeout, 'APP_AUTH_TIMEOUT', 1, MAX_LIMIT_SECONDS),
    endpoints: {
      login: toEndpoint(endpoints.login, D.auth.endpoints.login),
      userInfo: toEndpoint(endpoints.userInfo, D.auth.endpoints.userInfo),
      clients: toEndpoint(endpoints.clients, D.auth.endpoints.clients),
      otpSend: toEndpoint(endpoints.otpSend, D.auth.endpoints.otpSend),
      logout: toEndpoint(endpoints.logout, D.auth.endpoints.logout),
    },
    // With an OpenID Provider, a path left at the IAM's default reads the standard claim instead (sub, name, email, ...).
    mapping: (kind === 'oidc' ? oidcMapping : (mapping: IamMapping) => mapping)({
      token: path('token', D.auth.mapping.token),
      expiresIn: path('expiresIn', D.auth.mapping.expiresIn),
      id: path('id', D.auth.mapping.id),
      name: path('name', D.auth.mapping.name),
      email: path('email', D.auth.mapping.email),
      roles: path('roles', D.auth.mapping.roles),
      permissions: path('permissions', D.auth.mapping.permissions),
      roleKey: path('roleKey', D.auth.mapping.roleKey),
      permissionKey: path('permissionKey', D.auth.mapping.permissionKey),
      permissionType: path('permissionType', D.auth.mapping.permissionType),
      permissionTypeKey: path('permissionTypeKey', D.auth.mapping.permissionTypeKey),
      clients: path('clients', D.auth.mapping.clients),
      clientId: path('clientId', D.auth.mapping.clientId),
      clientCode: path('clientCode', D.auth.mapping.clientCode),
      clientName: path('clientName', D.auth.mapping.clientName),
      transactionId: path('transactionId', D.auth.mapping.transactionId),
    }),
    authenMethod: {
      authenticator: toText(authenMethod.authenticator, D.auth.authenMethod.authenticator) || D.auth.authenMethod.authenticator,
      messenger: toText(authenMethod.messenger, D.auth.authenMethod.messenger) || D.auth.authenMethod.messenger,
    },
    secrets,
    apiProxyTarget: toBaseUrl(raw.apiProxyTarget, 'APP_API_PROXY_TARGET'),
    apiProxyTimeout: toInt(raw.apiProxyTimeout, D.apiProxyTimeout, 'APP_API_PROXY_TIMEOUT', 1),
    apiUploads: {
      idleMs: toInt(raw.apiBodyIdleTimeout, D.apiBodyIdleTimeout, 'APP_API_BODY_IDLE_TIMEOUT', 1, MAX_LIMIT_SECONDS) * 1000,
      perClient: toInt(raw.apiUploadsPerClient, D.apiUploadsPerClient, 'APP_API_UPLOADS_PER_CLIENT'),
    },
    apiPool: {
      connections: toInt(raw.apiProxyConnections, D.apiProxyConnections, 'APP_API_PROXY_CONNECTIONS', 1, 65_536),
      waitMs: toInt(raw.apiPoolWait, D.apiPoolWait, 'APP_API_POOL_WAIT', 1, MAX_LIMIT_SECONDS) * 1000,
    },
    authBodyTimeoutSeconds: toInt(raw.authBodyTimeout, D.authBodyTimeout, 'APP_AUTH_BODY_TIMEOUT', 1, MAX_LIMIT_SECONDS),
    trustedOrigins: toList(raw.trustedOrigins).map(origin => origin.replace(/\/+$/, '').toLowerCase()),
    trustProxy: toProxyTrust(raw.trustProxy),
    rateLimit: {
      perUser: toInt(rateLimit.perUser, D.rateLimit.perUser, 'APP_RATE_LIMIT_PER_USER'),
      perIp: toInt(rateLimit.perIp, D.rateLimit.perIp, 'APP_RATE_LIMIT_PER_IP'),
      windowSeconds: toInt(rateLimit.window, D.rateLimit.window, 'APP_RATE_LIMIT_WINDOW', 1),
      maxKeys: toInt(rateLimit.maxKeys, D.rateLimit.maxKeys, 'APP_RATE_LIMIT_MAX_KEYS', 100),
    },
    redisUrl: toRedisUrl(raw.redisUrl, 'APP_REDIS_URL'),
    revocationJournal: toText(raw.revocationJournal),
    logging: parseLoggingConfig(raw),
    metrics: { port: toPort(raw.metricsPort, 'APP_METRICS_PORT'), host: toText(raw.metricsHost, D.metricsHost) || D.metricsHost },
    shutdownTimeoutSeconds: toInt(raw.shutdownTimeout, D.shutdownTimeout, 'APP_SHUTDOWN_TIMEOUT'),
    keepAliveTimeoutSeconds: toInt(raw.keepAliveTimeout, D.keepAliveTimeout, 'APP_KEEP_ALIVE_TIMEOUT', 1, MAX_LIMIT_SECONDS),
    webSocketLimits: {
      perSession: toInt(raw.wsMaxPerSession, D.wsMaxPerSession, 'APP_WS_MAX_PER_SESSION'),
      perClient: toInt(raw.wsMaxPerClient, D.wsMaxPerClient, 'APP_WS_MAX_PER_CLIENT'),
    },
    keepTickShape: raw.keepTickShape === undefined || raw.keepTickShape === '' ? D.keepTickShape : toBool(raw.keepTickShape, 'APP_KEEP_TICK_SHAPE'),
    verifyPassToken: raw.verifyPassToken === undefined || raw.verifyPassToken === '' ? D.verifyPassToken : toBool(raw.verifyPassToken, 'APP_VERIFY_PASS_TOKEN'),
  }
}
