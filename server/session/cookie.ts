/**
 * session/: the live session. The sealed svc_session cookie (this file; whether the browser keeps it over plain http:
 * plain-http.ts), revocations (revocations.ts, shared through Redis, with their journal: revocation-journal.ts), the
 * token a session sends (token.ts), and the idle timeout's re-seals (idle.ts).
 * May import: core, ops, http, stores. Never a kind of IAM: the contract IAM and OpenID Connect (iam/, oidc/) write
 * sessions through here, and an OpenID session's tokens plug in through token.ts's takeTokensFrom.
 */
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { appendResponseHeader, type H3Event } from 'h3'
import type { AuthUser } from '../../shared/types'
import { isDeviceId } from '../core/iam/device'
import { fitSessionToBudget } from '../core/session/budget'
import { cookieValues, DEVICE_COOKIE, readCookie, readSingleCookie, serializeCookie, SESSION_COOKIE } from '../core/session/cookie'
import { idleEndsAt, idleHintCookie, isIdle } from '../core/session/idle'
import { newSessionId, sealSession, SESSION_TTL_MS, type SessionPayload } from '../core/session/seal'
import { GatewayError, MESSAGES } from '../http/errors'
import { useGatewayConfig } from '../ops/config'
import { useLogger } from '../ops/logger'
import { resealLines } from './idle'
import { isSessionRevoked } from './revocations'

const SESSION_MAX_AGE = SESSION_TTL_MS / 1000
const DEVICE_MAX_AGE = 365 * 24 * 60 * 60
/** Secure everywhere but under `nuxt dev`. */
const secure = !import.meta.dev

/**
 * The session a cookie value holds, or null: malformed, tampered, foreign, expired, idle longer than
 * APP_SESSION_IDLE_TIMEOUT (one comparison) or revoked.
 */
export function openLiveSession(value: string | undefined, now = Date.now()): SessionPayload | null {
  if (!value) return null
  const { sessions, config } = useGatewayConfig()
  const payload = sessions.open(value, now)
  return payload && !isIdle(payload, config.sessionIdleMs, now) && !isSessionRevoked(payload) ? payload : null
}

/**
 * The session of the request, or null for a missing, malformed, tampered, foreign, expired or revoked cookie, and for
 * more than one svc_session value (a sibling subdomain can plant one that the browser sends first).
 */
export function readGatewaySession(event: H3Event): SessionPayload | null {
  return openLiveSession(readSingleCookie(event.node.req.headers.cookie, SESSION_COOKIE))
}

/** Every session the request's svc_session values hold (each that opens and is not revoked). */
export function readEverySession(event: H3Event): SessionPayload[] {
  return cookieValues(event.node.req.headers.cookie, SESSION_COOKIE).map(value => openLiveSession(value)).filter((session): session is SessionPayload => session !== null)
}

/** Whether the request carries more than one svc_session value. */
export function hasPlantedSession(event: H3Event): boolean {
  return cookieValues(event.node.req.headers.cookie, SESSION_COOKIE).length > 1
}

/**
 * A new session, sealed: its payload (`sid`, `iat`; `seen` with the idle timeout on) and the Set-Cookie value that
 * carries it, and with the idle timeout on the `svc_idle` one (`idleHint`) that goes with it.
 */
export interface SealedSession {
  payload: SessionPayload
  setCookie: string
  idleHint?: string
}

/**
 * Seals a new session for svc_session, without sending it. Over the 4 KB budget the stored user drops permissions,
 * then roles; still over: 500, never a cookie the browser would drop silently.
 */
export function sealGatewaySession(session: { user: AuthUser, accessToken?: string, expiresAt?: number }): SealedSession {
  const { seals, config } = useGatewayConfig()
  const iat = Date.now()
  const payload: SessionPayload = { ...session, iat, sid: newSessionId(), ...(config.sessionIdleMs ? { seen: iat } : {}) }
  const fit = fitSessionToBudget(payload, candidate =>
    serializeCookie(SESSION_COOKIE, sealSession(candidate, seals.session), { maxAgeSeconds: SESSION_MAX_AGE, secure }))
  if (!fit.ok) {
    useLogger().error(`cookie ${SESSION_COOKIE} cần ${fit.bytes} byte, vượt giới hạn 4096 byte (token ${session.accessToken?.length ?? 0} ký tự).`)
    throw new GatewayError(500, MESSAGES.cookieTooLarge)
  }
  if (fit.trimmed !== 'none') {
    const source = config.mock ? 'APP_AUTH_MOCK_USER' : 'IAM'
    useLogger().warn(`cookie ${SESSION_COOKIE} quá lớn: bỏ ${fit.trimmed === 'roles' ? 'permissions và roles' : 'permissions'} khỏi bản lưu (đọc lại từ ${source}).`)
  }
  const idleEnd = idleEndsAt(payload, config.sessionIdleMs)
  return { payload, setCookie: fit.setCookie, ...(idleEnd === null ? {} : { idleHint: idleHintCookie(idleEnd, SESSION_MAX_AGE, secure) }) }
}

/** Seals a new session into svc_session (see sealGatewaySession) and sends it; returns its payload. */
export function writeGatewaySession(event: H3Event, session: { user: AuthUser, accessToken?: string, expiresAt?: number }): SessionPayload {
  const sealed = sealGatewaySession(session)
  appendResponseHeader(event, 'set-cookie', sealed.setCookie)
  if (sealed.idleHint) appendResponseHeader(event, 'set-cookie', sealed.idleHint)
  return sealed.payload
}

/** Removes svc_session from the browser (and svc_idle, with the idle timeout on). */
export function clearGatewaySession(event: H3Event): void {
  appendResponseHeader(event, 'set-cookie', serializeCookie(SESSION_COOKIE, '', { maxAgeSeconds: 0, secure }))
  if (useGatewayConfig().config.sessionIdleMs) appendResponseHeader(event, 'set-cookie', idleHintCookie(null, 0, secure))
}

/** The browser's stable device id (svc_device cookie, 1 year), created on first use. */
export function useDeviceId(event: H3Event): string {
  const existing = readCookie(event.node.req.headers.cookie, DEVICE_COOKIE)
  if (isDeviceId(existing)) return existing
  const id = randomUUID()
  appendResponseHeader(event, 'set-cookie', serializeCookie(DEVICE_COOKIE, id, { maxAgeSeconds: DEVICE_MAX_AGE, secure }))
  return id
}

/**
 * Slides the session of a request Nitro serves (a page, /auth/session, a route of the app): the new cookie is set on
 * its answer before Nitro writes anything, which appends its own Set-Cookie lines after it. A request sent with
 * `X-Session-Peek` (the browser's own checks of when the session ends, useAuth's `refresh({ peek: true })`) is no
 * activity.
 */
export function slideNitroSession(req: IncomingMessage, res: ServerResponse): void {
  if (!useGatewayConfig().config.sessionIdleMs || req.headers['x-session-peek'] !== undefined) return
  const value = readSingleCookie(req.headers.cookie, SESSION_COOKIE)
  const session = value ? openLiveSession(value) : null
  const lines = session && resealLines(value!, session)
  if (lines) res.setHeader('set-cookie', lines)
}
