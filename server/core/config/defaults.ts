/**
 * Every APP_* setting's default, written once: nuxt.config.ts ships this tree as runtimeConfig.svcGateway (so each
 * key has its APP_* variable: auth.baseURL <- APP_AUTH_BASE_URL, see config.ts's envName), and config.ts falls back
 * to it for a value left empty. The README's configuration table is checked against it (test/unit/config.test.ts).
 * Pure data.
 */
export const GATEWAY_DEFAULTS = {
  auth: {
    /** Which IAM: 'iam' (the contract's) or 'oidc' (an OpenID Provider, settings under oidc). @default 'iam' */
    kind: 'iam',
    /** IAM base address; required unless mock. @default '' */
    baseURL: '',
    /** Mock mode: no IAM, any account. @default false */
    mock: false,
    /** Mock mode's user: JSON with any of id, name, email, roles, permissions over the contract's mock user. @default '' */
    mockUser: '',
    /** Application code used when a login carries no clientId. @default '' */
    clientId: '',
    /** Seconds a successful GET /auth/clients answer is kept per process; 0 turns the cache off. @default 60 */
    clientsCacheSeconds: 60,
    /** Seconds each IAM call may take before 504. @default 10 */
    timeout: 10,
    endpoints: {
      /** @default '/auth/auth/login-v1' */
      login: '/auth/auth/login-v1',
      /** @default '/iam/user/userInfo' */
      userInfo: '/iam/user/userInfo',
      /** '' gives an empty list. @default '/iam/client/findAll?status=1' */
      clients: '/iam/client/findAll?status=1',
      /** '' disables OTP sending. @default '/auth/auth/login/request' */
      otpSend: '/auth/auth/login/request',
      /** Called (POST, raw token in `authorization`) at logout; '' turns it off. @default '' */
      logout: '',
    },
    mapping: {
      token: 'body.tokenData.access_token',
      expiresIn: 'body.tokenData.expires_in',
      id: 'body.userId',
      name: 'body.fullName',
      email: 'body.email',
      roles: 'body.listRole',
      permissions: 'body.authorization',
      roleKey: 'code',
      permissionKey: 'uri',
      /** '' disables the type filter. @default 'web' */
      permissionType: 'web',
      permissionTypeKey: 'type',
      clients: 'body',
      clientId: 'id',
      clientCode: 'code',
      clientName: 'name',
      transactionId: 'body.transactionId',
    },
    authenMethod: {
      /** @default 'AUTHENTICATOR' */
      authenticator: 'AUTHENTICATOR',
      /** @default 'MESSENGER' */
      messenger: 'MESSENGER',
    },
  },
  oidc: {
    /** The OpenID Provider's issuer URL (discovery at `<issuer>/.well-known/openid-configuration`); required with kind oidc. @default '' */
    issuer: '',
    /** The gateway's client id at the provider; required with kind oidc. @default '' */
    clientId: '',
    /** The client secret; '' makes a public client (PKCE only) unless a client key is set. @default '' */
    clientSecret: '',
    /**
     * How the gateway authenticates at the token, revocation and PAR endpoints: 'client_secret_basic',
     * 'client_secret_post', 'private_key_jwt' or 'none'; '' chooses from the provider's
     * `token_endpoint_auth_methods_supported` (a client key first, then the secret). @default ''
     */
    tokenAuthMethod: '',
    /** A private key (PEM or JWK; RSA for RS256, P-256 for ES256) for private_key_jwt. @default '' */
    clientKeyFile: '',
    /** The key's `kid` when the file does not say it (PEM); '' is the JWK's own, else its RFC 7638 thumbprint. @default '' */
    clientKeyId: '',
    /** Space-separated scopes asked for. @default 'openid profile email offline_access' */
    scopes: 'openid profile email offline_access',
    /** Where the provider sends the browser back; '' is the request's own origin + /auth/callback. @default '' */
    redirectUri: '',
    /** Where the provider sends the browser after logging out there; '' is the request's own origin + /auth/logged-out. @default '' */
    postLogoutRedirectUri: '',
    /** The login page sends the browser straight to the provider. @default false */
    autoRedirect: false,
    /**
     * Pushed authorization requests (RFC 9126): the login's parameters go to the provider's PAR endpoint, the browser
     * carries only client_id and request_uri. Also used whenever the provider says require_pushed_authorization_requests.
     * @default false
     */
    par: false,
    /**
     * Step-up for the whole gateway: acr values (space-separated, any of them) every session's login must have; asked
     * for at each login (`acr_values`), and an /api request of a session without it gets the step-up answer. @default ''
     */
    acrValues: '',
    /** Step-up: seconds a login stays fresh enough (`max_age`); '' for no limit. @default '' */
    maxAge: '',
  },
  session: {
    /** At least 32 characters; required at start. */
    secret: '',
    /** Comma-separated old secrets, accepted for reading. @default '' */
    secretPrevious: '',
    /**
     * Minutes a session may go unused before it ends (decimals allowed: 0.5 is 30 s); activity slides it, the 8-hour
     * end stays. 0 turns it off. @default 0
     */
    idleTimeout: 0,
    /**
     * Live sessions one user may have at most (1 to 100): a login past it ends the oldest (revoked on every instance).
     * 0: no cap. @default 0
     */
    maxPerUser: 0,
  },
  /** /api/** goes to a backend; false: none (a gateway for forward auth alone), APP_API_PROXY_TARGET not needed. @default true */
  apiProxy: true,
  /** Backend address for /api/**; required unless apiProxy is false. @default '' */
  apiProxyTarget: '',
  /** YAML or JSON file of named /api routes, each with its own backend and token rule (docs/routes.md); '' for none. @default '' */
  apiRoutesFile: '',
  /** ms without a backend answer before 504. @default 60000 */
  apiProxyTimeout: 60000,
  /**
   * Seconds an /api request body may send no byte while the backend waits for one: the upload is cut (408 when nothing
   * was answered yet). An upload that keeps moving runs as long as it moves. @default 30
   */
  apiBodyIdleTimeout: 30,
  /** Request bodies in flight through /api at once per client address (429 beyond it); 0: no limit. @default 16 */
  apiUploadsPerClient: 16,
  /** Connections to the backend at most (the pool /api requests share). @default 256 */
  apiProxyConnections: 256,
  /** Seconds a request waits for a free backend connection when all are busy, before 503. @default 5 */
  apiPoolWait: 5,
  /** Seconds the body of POST /auth/login or /auth/otp/send may take after its headers before 408. @default 10 */
  authBodyTimeout: 10,
  /** Comma-separated origins allowed to send unsafe cross-origin requests. @default '' */
  trustedOrigins: '',
  /** Reverse proxies believed: how many stand in front (true = 1), or their comma-separated addresses/CIDR networks. @default false */
  trustProxy: false,
  /** GET /auth/verify also sends `Authorization: Bearer <token>` to the protected service. @default false */
  verifyPassToken: false,
  rateLimit: {
    /** Failures per (IP, username) in the window; 0 turns it off. @default 5 */
    perUser: 5,
    /** Failures per IP in the window; 0 turns it off. @default 100 */
    perIp: 100,
    /** Window in seconds. @default 900 */
    window: 900,
    /** Counters kept in memory at most (about 300 bytes each); blocking ones are never pushed out. @default 100000 */
    maxKeys: 100000,
  },
  /** Redis for shared rate-limit counters and session revocations (with Sentinel or Cluster: its scheme and ACL user only). @default '' */
  redisUrl: '',
  /** Comma-separated host:port of the Redis Sentinels (then APP_REDIS_SENTINEL_NAME). @default '' */
  redisSentinels: '',
  /** Name of the primary the sentinels watch. @default '' */
  redisSentinelName: '',
  /** Password of the sentinels themselves (their requirepass), when set. @default '' */
  redisSentinelPassword: '',
  /** Comma-separated host:port of Redis Cluster nodes to start from. @default '' */
  redisClusterNodes: '',
  /** PEM file of the CA that signed the Redis servers' certificates (with rediss://). @default '' */
  redisTlsCa: '',
  /** File (on a volume) for revocations Redis never took, read at the next start; '' turns it off. @default '' */
  revocationJournal: '',
  /** fatal, error, warn, info, debug, trace or silent. @default 'info' */
  logLevel: 'info',
  /** json (one JSON object per line) or pretty (for people). @default 'json' */
  logFormat: 'json',
  /** One log line per request. @default true */
  accessLog: true,
  /** Port of the Prometheus /metrics listener; '' turns it off. @default '' */
  metricsPort: '',
  /** Address the metrics listener binds: loopback until a deployment opens it (it has no authentication). @default '127.0.0.1' */
  metricsHost: '127.0.0.1',
  /** Seconds in-flight requests and streams get to finish after SIGTERM. @default 30 */
  shutdownTimeout: 30,
  /**
   * Seconds an idle keep-alive connection from a client is kept open (and announced in `Keep-Alive: timeout=`): longer
   * than the idle time of the proxies and load balancers in front (nginx's upstream keepalive_timeout and AWS ALB's
   * idle timeout are 60 s), so that the gateway never closes a connection one of them is about to reuse. @default 65
   */
  keepAliveTimeout: 65,
  /** WebSocket tunnels open at most per session (429 at the handshake beyond); 0: no limit. @default 32 */
  wsMaxPerSession: 32,
  /** WebSocket tunnels open at most per client address (429 at the handshake beyond); 0: no limit. @default 128 */
  wsMaxPerClient: 128,
  /**
   * Opt-in: keep one of Node's nextTick entries alive for the life of the process, so that an idle spell cannot
   * leave V8's nextTick literal on its slow path (README, Performance). Changes the whole process. @default false
   */
  keepTickShape: false,
  /**
   * With tracing on (OTEL_EXPORTER_OTLP_ENDPOINT): continue the trace of an incoming `traceparent`. Off, a client
   * chooses no trace id and forces no sampling; turn it on behind a proxy that sets or cleans the header. @default false
   */
  otelTrustIncoming: false,
}

export type GatewayDefaults = typeof GATEWAY_DEFAULTS
