/** The signed-in user as the gateway hands it to the browser. */
export interface AuthUser {
  id: string
  name: string
  email: string
  /** Role codes. */
  roles: string[]
  /** Permission URIs, for example '/orders/search'. */
  permissions: string[]
}

/** OTP delivery method, as the login form names it. */
export type OtpMethod = 'authenticator' | 'messenger'

/** Body of POST /auth/login. */
export interface LoginCredentials {
  username: string
  password: string
  /** Application code (AuthClientOption.code). */
  clientId?: string
  method?: OtpMethod
  otp?: string
  /** Value returned by POST /auth/otp/send. */
  transactionId?: string
}

/** Body of POST /auth/otp/send. */
export interface OtpSendRequest {
  username: string
  password: string
  clientId?: string
}

/** One application of the login form's dropdown. */
export interface AuthClientOption {
  id: string
  code: string
  name: string
}

/** Answer of GET /auth/session. */
export interface SessionResponse {
  user: AuthUser | null
  /** When the session ends (ms since the epoch: the earlier of its 8-hour end and the token's expiry); null without one. */
  expiresAt: number | null
  /**
   * With the gateway's idle timeout on (APP_SESSION_IDLE_TIMEOUT): when the session goes idle unless it is used again
   * (ms since the epoch). Absent with it off, and without a session.
   */
  idleExpiresAt?: number
}

/** One session of a user, as GET /auth/sessions (and the server util listUserSessions) shows it. */
export interface UserSession {
  /** What POST /auth/sessions/end (and the server util endSession) takes. */
  id: string
  /** Login time, ms since the epoch. */
  createdAt: number
  /** Last seen in use, ms since the epoch: coarse (moved at login and by the idle timeout's re-seals). */
  lastSeenAt: number
  /** The client's address at login, as the gateway believes it (APP_TRUST_PROXY). */
  address: string
  /** A short label of the browser and system ('Chrome on Windows'); '' when unknown. */
  device: string
  /** The session of the request that asked (false in listUserSessions). */
  current: boolean
}

/** Error body of every gateway route. */
export interface GatewayErrorBody {
  statusCode: number
  statusMessage: string
  /** A step-up answer (401 of an /api route that needs a stronger or fresher login, OpenID Connect). */
  stepUp?: StepUpHint
}

/** What a step-up answer asks: acr values (space-separated) and a login's greatest age in seconds; null: not asked. */
export interface StepUpHint {
  acr: string | null
  maxAge: number | null
}

/** How the login page logs in: the contract IAM's form, or the OpenID Provider's login (`sso`, APP_AUTH_KIND=oidc). */
export interface LoginMethod {
  sso: boolean
  /** The login page sends the browser straight to the provider (APP_OIDC_AUTO_REDIRECT). */
  autoRedirect: boolean
  /** The page came over plain http to a host that is not the browser's own machine: the Secure session cookie is dropped. */
  plainHttp?: boolean
}
