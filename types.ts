/**
 * The layer's types for the app's own code: `import type { AuthUser } from 'svc-auth-gateway/types'`.
 * (useAuth, usePermission, useApi, useSessionExpiry, useSessions and AppError are auto-imported in the app.)
 */
export type { AuthClientOption, AuthUser, LoginCredentials, OtpMethod, OtpSendRequest, SessionResponse, UserSession } from './shared/types'
export { AppError } from './app/utils/app-error'
