/** Validation of the bodies of POST /auth/login and POST /auth/otp/send. Pure. */
import type { LoginCredentials, OtpMethod } from '../../../shared/types'

/** A string or a finite number as trimmed text; anything else is undefined. */
function optionalText(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  if (typeof value !== 'string') return undefined
  const text = value.trim()
  return text || undefined
}

function isOtpMethod(value: unknown): value is OtpMethod {
  return value === 'authenticator' || value === 'messenger'
}

/**
 * The login credentials of a parsed body, or null when the body is not an object or the username (after trimming)
 * or password is missing or not a string.
 */
export function parseLoginCredentials(body: Record<string, unknown> | null): LoginCredentials | null {
  if (!body) return null
  const { username, password } = body
  if (typeof username !== 'string' || typeof password !== 'string') return null
  const trimmed = username.trim()
  if (!trimmed || !password) return null
  const credentials: LoginCredentials = { username: trimmed, password }
  const clientId = optionalText(body.clientId)
  const otp = optionalText(body.otp)
  const transactionId = optionalText(body.transactionId)
  if (clientId) credentials.clientId = clientId
  if (isOtpMethod(body.method)) credentials.method = body.method
  if (otp) credentials.otp = otp
  if (transactionId) credentials.transactionId = transactionId
  return credentials
}
