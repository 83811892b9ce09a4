/**
 * The gateway's configuration as parsed (GatewayConfig) and as it arrives (RawGatewayConfig), its parts, and its error.
 * Types only (and ConfigError): every module may read them, they import nothing.
 */

export interface GatewayConfig {
  /** 'iam': the contract's IAM; 'oidc': an OpenID Provider (`oidc` holds its settings). */
  kind: 'iam' | 'oidc'
  /** Set when kind is 'oidc'. */
  oidc?: OidcConfig
  mock: boolean
  /** APP_AUTH_MOCK_USER's fields, put over the contract's mock user ({}: the contract's own). */
  mockUser: MockUserFields
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
  /** ms a session may go unused before it ends (APP_SESSION_IDLE_TIMEOUT, core/session/idle.ts); 0: no idle timeout. */
  sessionIdleMs: number
  /** Live sessions one user may have (APP_SESSION_MAX_PER_USER): a login past it ends the oldest; 0: no cap. */
  sessionMaxPerUser: number
  /** Whether /api/** goes to a backend (APP_API_PROXY); false: a gateway without one, APP_API_PROXY_TARGET not needed. */
  apiProxy: boolean
  /** Backend address without a trailing '/'; '' when not configured. */
  apiProxyTarget: string
  /** The routes file (APP_API_ROUTES_FILE), read at start by ops/routes-file.ts; '' for none. */
  apiRoutesFile: string
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
  /** The shared Redis (APP_REDIS_*: core/config/redis-config.ts); undefined: none, state per process. */
  redis: RedisSettings | undefined
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
  /** With tracing on, an incoming `traceparent` is continued (APP_OTEL_TRUST_INCOMING); else every request starts its own trace. */
  otelTrustIncoming: boolean
  /** GET /auth/verify passes the IAM token on (APP_VERIFY_PASS_TOKEN). */
  verifyPassToken: boolean
}

/** What a route sends as Authorization: the session's token, required (user), when there is one (optional), or never (none). */
export type RouteTokenRule = 'user' | 'optional' | 'none'

/**
 * The audience of a route's own access token (APP_AUTH_KIND=oidc only): asked of the OpenID Provider with the session's
 * refresh token, with `resource` (RFC 8707) and/or `scope`.
 */
export interface RouteAudience {
  /** An absolute URI without fragment: the resource server the token is for. */
  resource?: string
  /** Space-separated scopes, in the file's order, each once. */
  scope?: string
  /** `<resource> <scope>`: one token per key and session (two routes of one audience share it). */
  key: string
  /** Obtained by exchanging the session's access token (RFC 8693 token exchange) instead of with its refresh token. */
  exchange?: true
}

/** One route of the routes file (core/config/routes.ts): requests under `prefix` go to `target`. */
export interface ApiRoute {
  /** Its name in the access line, the metrics and /readyz. */
  name: string
  /** `/api/<segment>...`, matched on whole segments of the router's path; the longest match wins. */
  prefix: string
  /** The backend's address (its base path kept): `<prefix>/<rest>` is sent as `<target>/<rest>`. */
  target: string
  token: RouteTokenRule
  /** Permissions the session's user must all hold (403 before the backend otherwise). */
  permissions: string[]
  /** Permissions of which the user must hold one, when not empty. */
  anyPermissions: string[]
  /** The backend's silence limit (ms). */
  timeoutMs: number
  /** Whether WebSocket handshakes are tunnelled to the backend. */
  websocket: boolean
  /** Headers added to every request to the backend (lower-case names). */
  headers: Record<string, string>
  /** Its own access token's audience (`resource` / `scope`), instead of the session's main token. */
  audience?: RouteAudience
  /** Step-up (OpenID sessions): acr values of which the session's login must have one, and its greatest age (seconds). */
  acr?: string[]
  maxAge?: number
}

/** The fields of the mock user a team sets (APP_AUTH_MOCK_USER): AuthUser's, each optional. */
export interface MockUserFields {
  id?: string
  name?: string
  email?: string
  roles?: string[]
  permissions?: string[]
}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

export interface LoggingConfig {
  level: LogLevel
  format: 'json' | 'pretty'
  /** One line per request. */
  access: boolean
}

/** A Redis node or sentinel by host and port. */
export interface RedisNode {
  host: string
  port: number
}

/** What every topology shares: the ACL user (or the default user's password), and TLS. */
export interface RedisAuth {
  username?: string
  password?: string
  /** rediss:// in APP_REDIS_URL: TLS to every Redis node (and to the sentinels). */
  tls: boolean
  /** APP_REDIS_TLS_CA: a PEM file of the CA that signed the Redis certificates ('' for the system's CAs). */
  tlsCa: string
}

/** The gateway's Redis: undefined in GatewayConfig when none is configured (state per process). */
export type RedisSettings
  = | RedisAuth & { kind: 'standalone', url: string }
    | RedisAuth & { kind: 'sentinel', sentinels: RedisNode[], name: string, sentinelPassword?: string, db: number }
    | RedisAuth & { kind: 'cluster', nodes: RedisNode[] }

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
  apiProxy?: unknown
  apiProxyTarget?: unknown
  apiRoutesFile?: unknown
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
  redisSentinels?: unknown
  redisSentinelName?: unknown
  redisSentinelPassword?: unknown
  redisClusterNodes?: unknown
  redisTlsCa?: unknown
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
  otelTrustIncoming?: unknown
}

/** Where each field of the user, the token and the lists sit in the IAM's answers: dot paths (APP_AUTH_MAPPING_*). */
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

/** How the gateway authenticates as a client at the provider's token, revocation and PAR endpoints. */
export type TokenAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none'

/** The OpenID Connect settings (APP_AUTH_KIND=oidc, APP_OIDC_*), parsed by oidc-config.ts. */
export interface OidcConfig {
  /** Issuer URL exactly as the provider names itself (no trailing '/' added or removed). */
  issuer: string
  clientId: string
  /** '' for a public client. */
  clientSecret: string
  /** APP_OIDC_TOKEN_AUTH_METHOD; '' chooses from the provider's list when discovery is read (chooseTokenAuthMethod). */
  tokenAuthMethod: TokenAuthMethod | ''
  /** The private key file for private_key_jwt ('' for none) and its `kid` when the file does not say it. */
  clientKeyFile: string
  clientKeyId: string
  scopes: string
  /** '' is the request's own origin + /auth/callback. */
  redirectUri: string
  /** '' is the request's own origin + /auth/logged-out. */
  postLogoutRedirectUri: string
  autoRedirect: boolean
  /** APP_OIDC_PAR: push every authorization request (else only when the provider requires it). */
  par: boolean
  /** APP_OIDC_ACR_VALUES and APP_OIDC_MAX_AGE (seconds): what every session's login must have ([] and undefined: nothing). */
  acrValues: string[]
  maxAge: number | undefined
}

/**
 * APP_TRUST_PROXY as parsed: how many reverse proxies stand in front, or the addresses and networks they connect from
 * (core/http/forwarding.ts walks X-Forwarded-For with it).
 */
export type ProxyTrust = number | readonly string[]
