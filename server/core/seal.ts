/**
 * Sealing of the session cookie value: `v1.<iv>.<ciphertext>.<tag>`, each part base64url,
 * AES-256-GCM with a 12-byte IV and a 16-byte tag, keys derived by HKDF-SHA256 from the secrets.
 * Pure: node:crypto only.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'
import type { AuthUser } from '../../shared/types'

export const SEAL_VERSION = 'v1'
/** 8 hours: the session's whole life, counted from login. */
export const SESSION_TTL_MS = 8 * 60 * 60 * 1000
const IV_BYTES = 12
const TAG_BYTES = 16
/** Clock skew tolerated for an issue time in the future (several instances). */
const FUTURE_SKEW_MS = 60_000
const HKDF_SALT = 'svc-auth-gateway'

/** What the sealed cookie carries. */
export interface SessionPayload {
  user: AuthUser
  /** Absent in mock mode. */
  accessToken?: string
  /** Token expiry, ms since the epoch. */
  expiresAt?: number
  /** Issue time, ms since the epoch. */
  iat: number
  /** Random session id (96 bits, base64url): what a logout revokes. */
  sid: string
}

/** A new session id: 96 random bits, 16 base64url characters. */
export function newSessionId(): string {
  return randomBytes(12).toString('base64url')
}

/** When the session ends whatever happens: 8 hours after its issue time. */
export function sessionEndsAt(payload: Pick<SessionPayload, 'iat'>): number {
  return payload.iat + SESSION_TTL_MS
}

/** When the session stops being usable: the earlier of its 8-hour end and the token's expiry. */
export function sessionExpiresAt(payload: Pick<SessionPayload, 'iat' | 'expiresAt'>): number {
  const end = sessionEndsAt(payload)
  return payload.expiresAt !== undefined && payload.expiresAt < end ? payload.expiresAt : end
}

/** The keys of one mode: the first seals, all open. */
export interface SealKeys {
  keys: Buffer[]
}

/**
 * Derives the keys once. Mock mode and an OpenID Provider (`kind` 'oidc') use another HKDF `info` each, so a cookie of
 * one is no session for a gateway of another (a mock cookie for a real gateway, a contract-IAM cookie for an OIDC one).
 */
export function deriveSealKeys(secrets: string[], mock: boolean, kind: 'iam' | 'oidc' = 'iam'): SealKeys {
  const info = mock ? 'svc_session v1 mock' : kind === 'oidc' ? 'svc_session v1 oidc' : 'svc_session v1'
  return {
    keys: secrets.map(secret => Buffer.from(hkdfSync('sha256', secret, HKDF_SALT, info, 32))),
  }
}

/**
 * JSON with every non-ASCII character escaped (\uXXXX): the opened text is then pure ASCII, which V8 decodes and
 * parses about four times faster than the same JSON holding Vietnamese names. It runs at every request; this at login.
 */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, char => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** Seals a payload with the current key. */
export function sealSession(payload: SessionPayload, sealKeys: SealKeys): string {
  return sealValue(payload, sealKeys)
}

/**
 * Seals any JSON value in the session's format with the current key (the OpenID login's short-lived cookie, the
 * tokens kept in Redis). Each reader checks the shape it expects, so one kind is never taken for another.
 */
export function sealValue(value: unknown, sealKeys: SealKeys): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', sealKeys.keys[0]!, iv)
  const ciphertext = Buffer.concat([cipher.update(asciiJson(value), 'utf8'), cipher.final()])
  const tag = cipher.getAuthTag()
  return `${SEAL_VERSION}.${iv.toString('base64url')}.${ciphertext.toString('base64url')}.${tag.toString('base64url')}`
}

/** The JSON value a sealed text holds, or null when it is malformed, tampered or sealed with an unknown key. */
export function unsealValue(value: string | undefined, sealKeys: SealKeys, maxLength = 65_536): unknown {
  const text = openSealed(value, sealKeys, maxLength)
  if (text === null) return null
  try {
    return JSON.parse(text)
  }
  catch {
    return null
  }
}

/** base64url decoding that refuses any text that does not re-encode to itself (Node ignores stray bits). */
function decodeExact(part: string): Buffer | null {
  const bytes = Buffer.from(part, 'base64url')
  return bytes.toString('base64url') === part ? bytes : null
}

function isUser(value: unknown): value is AuthUser {
  if (value === null || typeof value !== 'object') return false
  const user = value as Record<string, unknown>
  return typeof user.id === 'string' && typeof user.name === 'string' && typeof user.email === 'string'
    && Array.isArray(user.roles) && Array.isArray(user.permissions)
}

/**
 * Opens a sealed value. Anything malformed, tampered, sealed with an unknown key, or issued more than 8 hours ago
 * is null: "no session", never an error.
 */
export function unsealSession(value: string | undefined, sealKeys: SealKeys, now = Date.now()): SessionPayload | null {
  const text = openSealed(value, sealKeys)
  return text === null ? null : validPayload(text, now)
}

/** The text a sealed value holds (any of the keys), or null. */
function openSealed(value: string | undefined, sealKeys: SealKeys, maxLength = 8192): string | null {
  if (!value || value.length > maxLength) return null
  const parts = value.split('.')
  if (parts.length !== 4 || parts[0] !== SEAL_VERSION) return null
  const iv = decodeExact(parts[1]!)
  const ciphertext = decodeExact(parts[2]!)
  const tag = decodeExact(parts[3]!)
  if (!iv || !ciphertext || !tag || iv.length !== IV_BYTES || tag.length !== TAG_BYTES) return null
  for (const key of sealKeys.keys) {
    let text: string
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES })
      decipher.setAuthTag(tag)
      const plain = decipher.update(ciphertext)
      decipher.final() // throws when the tag does not match; GCM returns no more bytes
      text = plain.toString('utf8')
    }
    catch {
      continue
    }
    return text
  }
  return null
}

function validPayload(text: string, now: number): SessionPayload | null {
  let payload: Partial<SessionPayload>
  try {
    payload = JSON.parse(text)
  }
  catch {
    return null
  }
  if (payload === null || typeof payload !== 'object' || !isUser(payload.user)) return null
  if (typeof payload.iat !== 'number' || payload.iat > now + FUTURE_SKEW_MS || now - payload.iat >= SESSION_TTL_MS) return null
  if (payload.accessToken !== undefined && typeof payload.accessToken !== 'string') return null
  if (payload.expiresAt !== undefined && typeof payload.expiresAt !== 'number') return null
  // A session without its id could never be revoked: no session.
  if (typeof payload.sid !== 'string' || payload.sid.length < 16) return null
  return payload as SessionPayload
}

/** Whether the session's token may still be used (present and, when expiresAt is known, not past it). */
export function liveToken(payload: SessionPayload | null, now = Date.now()): string | undefined {
  if (!payload?.accessToken) return undefined
  if (payload.expiresAt !== undefined && payload.expiresAt <= now) return undefined
  return payload.accessToken
}
