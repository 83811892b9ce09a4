/**
 * Sealing of the session cookie value: `v1.<iv>.<ciphertext>.<tag>`, each part base64url,
 * AES-256-GCM with a 12-byte IV and a 16-byte tag, keys derived by HKDF-SHA256 from the secrets.
 * Pure: node:crypto only.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'
import type { AuthUser } from '../../../shared/types'

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
  /**
   * Last seen in use, ms since the epoch (core/session/idle.ts): only with APP_SESSION_IDLE_TIMEOUT on. Always 13
   * digits, like `iat`, so a re-sealed cookie is as long as the one it replaces (the 4 KB budget holds).
   */
  seen?: number
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

/**
 * Every kind of text the gateway seals. Each has a key of its own (HKDF `info`) and a label bound into each seal as
 * AES-GCM additional data, so a text sealed as one kind never opens as another: a token record copied out of Redis is
 * no session cookie, a trip cookie is no token record. A session's kind follows the gateway's mode (a mock cookie is
 * no session for a real gateway, a contract-IAM cookie none for an OpenID one). A new kind gets its own entry here.
 */
export type SealKind = 'session' | 'session-mock' | 'session-oidc' | 'oidc-trip' | 'oidc-tokens' | 'oidc-logout'

const KINDS: Record<SealKind, { info: string, legacy?: true }> = {
  'session': { info: 'svc_session v1', legacy: true },
  'session-mock': { info: 'svc_session v1 mock', legacy: true },
  'session-oidc': { info: 'svc_session v1 oidc' },
  'oidc-trip': { info: 'svc_oidc trip v1' },
  'oidc-tokens': { info: 'svc oidc tokens v1' },
  'oidc-logout': { info: 'svc_oidc_logout v1' },
}

/** The keys of one kind (the first seals, all open) and its label. */
export interface SealKeys {
  kind: SealKind
  keys: Buffer[]
  label: Buffer
  /**
   * Also opens seals made without a label (before kinds were bound in). Only the contract IAM's and mock mode's
   * sessions: their keys never sealed anything else, whereas an OpenID gateway's session key also sealed its trips and
   * token records. Such a cookie lives 8 hours at most: this goes in the release after the one that brought labels.
   */
  legacy: boolean
}

/** The session kind of a gateway's mode. */
export function sessionKind(mock: boolean, kind: 'iam' | 'oidc' = 'iam'): SealKind {
  return mock ? 'session-mock' : kind === 'oidc' ? 'session-oidc' : 'session'
}

/** Derives the keys of one kind, once, from the secrets (current first, then the previous ones). */
export function deriveSealKeys(secrets: string[], kind: SealKind): SealKeys {
  const { info, legacy } = KINDS[kind]
  return {
    kind,
    keys: secrets.map(secret => Buffer.from(hkdfSync('sha256', secret, HKDF_SALT, info, 32))),
    label: Buffer.from(`svc-auth-gateway ${kind}`),
    legacy: legacy ?? false,
  }
}

/**
 * JSON with every non-ASCII character escaped (\uXXXX): the opened text is then pure ASCII, which V8 decodes and
 * parses about four times faster than the same JSON holding Vietnamese names. It runs at every request; this at login.
 */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, char => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** Seals a session payload with the current key of a session kind. */
export function sealSession(payload: SessionPayload, sealKeys: SealKeys): string {
  return sealValue(payload, sealKeys)
}

/**
 * Seals any JSON value in the session's format with the current key of its kind, its label bound in (the OpenID
 * login's trip cookie, the tokens kept in Redis). Each reader also checks the shape it expects.
 */
export function sealValue(value: unknown, sealKeys: SealKeys): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', sealKeys.keys[0]!, iv)
  cipher.setAAD(sealKeys.label)
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

/** The text a sealed value holds (any of the kind's keys, its label bound in), or null. */
function openSealed(value: string | undefined, sealKeys: SealKeys, maxLength = 8192): string | null {
  if (!value || value.length > maxLength) return null
  const parts = value.split('.')
  if (parts.length !== 4 || parts[0] !== SEAL_VERSION) return null
  const iv = decodeExact(parts[1]!)
  const ciphertext = decodeExact(parts[2]!)
  const tag = decodeExact(parts[3]!)
  if (!iv || !ciphertext || !tag || iv.length !== IV_BYTES || tag.length !== TAG_BYTES) return null
  for (const key of sealKeys.keys) {
    const text = decrypt(key, iv, ciphertext, tag, sealKeys.label) ?? (sealKeys.legacy ? decrypt(key, iv, ciphertext, tag) : null)
    if (text !== null) return text
  }
  return null
}

/** AES-256-GCM decryption: the text, or null when the tag does not match (key, label or any byte). */
function decrypt(key: Buffer, iv: Buffer, ciphertext: Buffer, tag: Buffer, label?: Buffer): string | null {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES })
    if (label) decipher.setAAD(label)
    decipher.setAuthTag(tag)
    const plain = decipher.update(ciphertext)
    decipher.final() // throws when the tag does not match; GCM returns no more bytes
    return plain.toString('utf8')
  }
  catch {
    return null
  }
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
  if (payload.seen !== undefined && (typeof payload.seen !== 'number' || payload.seen < payload.iat || payload.seen > now + FUTURE_SKEW_MS)) return null
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
