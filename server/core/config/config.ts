/**
 * core/: the gateway's pure code, a folder per concern as above it (config, http, proxy, session, iam, limits, ops,
 * verify): values in, values out, no h3, Nitro, undici, Redis or logger; only core/, shared/ and Node's own modules.
 * core/config/: the configuration: its types (types.ts), defaults (defaults.ts), the coercion of one value
 * (coerce.ts), the OpenID settings (oidc-config.ts), the routes file (routes.ts), the mock user (mock-user.ts), the
 * preset and prerender checks (server-preset.ts), the Redis settings (redis-config.ts), what a parsed configuration still lacks (start-checks.ts), and the
 * whole parse (this file).
 *
 * The whole configuration, checked in one place. Defaults are written once, in defaults.ts (shipped as
 * `runtimeConfig.svcGateway` by nuxt.config.ts); every key is overridden by its `APP_*` variable, read as raw text
 * (coerce.ts's overlayEnv), so the app's own settings and NUXT_* variables stay the app's.
 */

import { checkTrustList } from '../http/forwarding'
import { MAX_INDEXED_PER_USER } from '../session/session-index'
import { toBaseUrl, toBool, toChoice, toEndpoint, toInt, toList, toPort, toRedisUrl, toText, MAX_LIMIT_SECONDS } from './coerce'
import { GATEWAY_DEFAULTS as D } from './defaults'
import { parseMockUser } from './mock-user'
import { parseRedisConfig } from './redis-config'
import { oidcMapping, parseOidcConfig } from './oidc-config'
import { ConfigError, MIN_SECRET_LENGTH, type GatewayConfig, type IamMapping, type LoggingConfig, type LogLevel, type ProxyTrust, type RawGatewayConfig, type RedisSettings } from './types'

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

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

/** The APP_REDIS_* variables, read (coerce.ts) and checked whole (redis-config.ts); undefined when none is set. */
export function readRedisSettings(raw: Pick<RawGatewayConfig, 'redisUrl' | 'redisSentinels' | 'redisSentinelName' | 'redisSentinelPassword' | 'redisClusterNodes' | 'redisTlsCa'>): RedisSettings | undefined {
  return parseRedisConfig({
    url: toRedisUrl(raw.redisUrl, 'APP_REDIS_URL'),
    sentinels: toList(raw.redisSentinels),
    sentinelName: toText(raw.redisSentinelName),
    sentinelPassword: toText(raw.redisSentinelPassword),
    clusterNodes: toList(raw.redisClusterNodes),
    tlsCa: toText(raw.redisTlsCa),
  })
}

/** The session's whole life in minutes (core/session/seal.ts SESSION_TTL_MS): an idle timeout beyond it never acts. */
const SESSION_MINUTES = 8 * 60

/**
 * APP_SESSION_IDLE_TIMEOUT in ms: minutes from 0 (off) to the session's 480, decimals allowed (0.5 is 30 s; tests
 * shorten time with it).
 */
export function toIdleTimeoutMs(value: unknown): number {
  if (value === undefined || value === null || value === '') return D.session.idleTimeout * 60_000
  const minutes = typeof value === 'number' ? value : Number(String(value).trim())
  if (!Number.isFinite(minutes) || minutes < 0 || minutes > SESSION_MINUTES) {
    throw new ConfigError(`APP_SESSION_IDLE_TIMEOUT phải là số phút từ 0 (tắt) đến ${SESSION_MINUTES} (8 giờ của phiên), vd. 30 hoặc 0.5 (nhận được '${String(value)}').`)
  }
  return Math.round(minutes * 60_000)
}

/** APP_LOG_LEVEL, APP_LOG_FORMAT and APP_ACCESS_LOG alone: the logger exists before the rest is checked. */
export function parseLoggingConfig(raw: RawGatewayConfig): LoggingConfig {
  return {
    level: toChoice(raw.logLevel, LOG_LEVELS, D.logLevel as LogLevel, 'APP_LOG_LEVEL'),
    format: toChoice(raw.logFormat, ['json', 'pretty'] as const, D.logFormat as 'json', 'APP_LOG_FORMAT'),
    access: raw.accessLog === undefined || raw.accessLog === '' ? D.accessLog : toBool(raw.accessLog, 'APP_ACCESS_LOG'),
  }
}

/**
 * Session secrets the repository has shown as examples (deploy/kubernetes-secret.yaml's placeholder, which
 * deploy/kubernetes.yaml itself held until 0.1.0): anyone can read them, so anyone could seal a session with one.
 */
export const EXAMPLE_SECRETS: readonly string[] = ['change-me-to-64-hex-characters-from-openssl-rand-hex-32-000000']

/** The refusal of a secret that is a documented example, naming its variable. */
function exampleSecretError(variable: string): ConfigError {
  return new ConfigError(`${variable} là giá trị mẫu của tài liệu, ai cũng biết: tạo khoá riêng (openssl rand -hex 32).`)
}

/** Reads the session secrets; raises when the current one is missing or short, or when one is a documented example. */
export function readSecrets(current: unknown, previous: unknown): string[] {
  const secret = toText(current)
  if (secret.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(
      `APP_SESSION_SECRET ${secret ? 'quá ngắn' : 'chưa cấu hình'}: cần ít nhất ${MIN_SECRET_LENGTH} ký tự.`,
    )
  }
  if (EXAMPLE_SECRETS.includes(secret)) throw exampleSecretError('APP_SESSION_SECRET')
  const older = toList(previous).filter(old => old !== secret)
  if (older.some(old => EXAMPLE_SECRETS.includes(old))) throw exampleSecretError('APP_SESSION_SECRET_PREVIOUS')
  return [secret, ...older]
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
        { autoRedirect: toBool(oidcRaw.autoRedirect, 'APP_OIDC_AUTO_REDIRECT'), par: toBool(oidcRaw.par, 'APP_OIDC_PAR') },
        message => new ConfigError(message))
    : undefined
  const apiProxy = raw.apiProxy === undefined || raw.apiProxy === '' ? D.apiProxy : toBool(raw.apiProxy, 'APP_API_PROXY')
  const apiProxyTarget = toBaseUrl(raw.apiProxyTarget, 'APP_API_PROXY_TARGET')
  if (!apiProxy && apiProxyTarget) throw new ConfigError('APP_API_PROXY=false không dùng được cùng APP_API_PROXY_TARGET: bỏ một trong hai.')
  const apiRoutesFile = toText(raw.apiRoutesFile)
  if (!apiProxy && apiRoutesFile) throw new ConfigError('APP_API_PROXY=false không dùng được cùng APP_API_ROUTES_FILE: bỏ một trong hai.')

  return {
    kind,
    ...(oidc ? { oidc } : {}),
    mock,
    // Read only in mock mode: a value that is never used stops no start.
    mockUser: mock ? parseMockUser(auth.mockUser) : {},
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
    sessionIdleMs: toIdleTimeoutMs(raw.session?.idleTimeout),
    sessionMaxPerUser: toInt(raw.session?.maxPerUser, D.session.maxPerUser, 'APP_SESSION_MAX_PER_USER', 0, MAX_INDEXED_PER_USER),
    apiProxy,
    apiProxyTarget,
    apiRoutesFile,
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
    redis: readRedisSettings(raw),
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
    otelTrustIncoming: raw.otelTrustIncoming === undefined || raw.otelTrustIncoming === '' ? D.otelTrustIncoming : toBool(raw.otelTrustIncoming, 'APP_OTEL_TRUST_INCOMING'),
    verifyPassToken: raw.verifyPassToken === undefined || raw.verifyPassToken === '' ? D.verifyPassToken : toBool(raw.verifyPassToken, 'APP_VERIFY_PASS_TOKEN'),
  }
}
