/**
 * The idle timeout (APP_SESSION_IDLE_TIMEOUT): a session unused for longer than its window is over, whatever its
 * 8-hour end. The last-seen time travels in the sealed cookie (`seen`), so every instance decides alike with no shared
 * store; activity re-seals it with a new `seen` at most once a quarter of the window. Pure.
 */
import { IDLE_COOKIE, serializeCookie } from './cookie'
import type { SessionPayload } from './seal'

/** When the session was last seen in use: its `seen`, or its issue time for a cookie sealed without one. */
export function lastSeen(payload: Pick<SessionPayload, 'iat' | 'seen'>): number {
  return payload.seen ?? payload.iat
}

/** Whether the session has been idle for its whole window (`idleMs` 0: the timeout is off, never). */
export function isIdle(payload: Pick<SessionPayload, 'iat' | 'seen'>, idleMs: number, now: number): boolean {
  return idleMs > 0 && now - lastSeen(payload) >= idleMs
}

/** Whether a request now should re-seal the cookie with a new `seen`: a quarter of the window has passed since the last. */
export function resealDue(payload: Pick<SessionPayload, 'iat' | 'seen'>, idleMs: number, now: number): boolean {
  return idleMs > 0 && now - lastSeen(payload) >= idleMs / 4
}

/** When the session goes idle unless it is used again (ms since the epoch), or null with the timeout off. */
export function idleEndsAt(payload: Pick<SessionPayload, 'iat' | 'seen'>, idleMs: number): number | null {
  return idleMs > 0 ? lastSeen(payload) + idleMs : null
}

/**
 * The Set-Cookie of `svc_idle`: when the session goes idle (ms), for the browser's tabs (useSessionExpiry): a cookie
 * they all share, so each learns of another's activity with no request. A time, never a token; the server decides.
 * Empty and expired (`maxAgeSeconds` 0) to remove it.
 */
export function idleHintCookie(idleEnd: number | null, maxAgeSeconds: number, secure: boolean): string {
  return serializeCookie(IDLE_COOKIE, idleEnd === null ? '' : String(idleEnd), { maxAgeSeconds: idleEnd === null ? 0 : maxAgeSeconds, secure, httpOnly: false })
}
