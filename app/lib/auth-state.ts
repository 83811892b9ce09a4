import type { Ref } from 'vue'
import { DEFAULT_LOCALE, type Locale } from '../../shared/messages'
import type { AuthUser, LoginMethod } from '../../shared/types'

// The layer's own client state: imported by path, never auto-imported into the app (README, API).

/** Key of the shared client state that holds the signed-in user (never the token). */
export const AUTH_STATE_KEY = 'svc:auth:user'
/** Key of the shared client state that holds when the session ends (ms since the epoch), or null. */
export const EXPIRES_STATE_KEY = 'svc:auth:expiresAt'

/** The shared user state (null when signed out). */
export function useAuthUser(): Ref<AuthUser | null> {
  return useState<AuthUser | null>(AUTH_STATE_KEY, () => null)
}

/** The shared state of when the session ends (ms since the epoch; null without a session). */
export function useAuthExpiresAt(): Ref<number | null> {
  return useState<number | null>(EXPIRES_STATE_KEY, () => null)
}

/** Key of the shared client state that holds when the session goes idle (ms), with the gateway's idle timeout on. */
export const IDLE_STATE_KEY = 'svc:auth:idleExpiresAt'

/** The shared state of when the session goes idle unless used (ms since the epoch; null: no idle timeout or no session). */
export function useAuthIdleExpiresAt(): Ref<number | null> {
  return useState<number | null>(IDLE_STATE_KEY, () => null)
}

/**
 * The idle end the gateway last wrote in the svc_idle cookie (ms), or null: in the browser only. Every tab shares the
 * cookie, so a request made by any tab that slid the session shows here at once, with no request of this tab's own.
 */
export function readIdleCookie(): number | null {
  if (typeof document === 'undefined') return null
  const match = /(?:^|;\s*)svc_idle=(\d{1,16})(?:;|$)/.exec(document.cookie)
  return match ? Number(match[1]) : null
}

/**
 * Brings the idle end up to the svc_idle cookie (another tab's activity, or this tab's own /api calls) and returns
 * when the session ends: the earlier of its end (8 hours, the token) and its idle end; null without a session.
 */
export function currentSessionEnd(expiresAt: Ref<number | null>, idleExpiresAt: Ref<number | null>): number | null {
  if (expiresAt.value === null) return null
  if (idleExpiresAt.value !== null) {
    const hinted = readIdleCookie()
    if (hinted !== null && hinted > idleExpiresAt.value) idleExpiresAt.value = hinted
    return Math.min(expiresAt.value, idleExpiresAt.value)
  }
  return expiresAt.value
}

/** Key of the shared client state that holds the pages' language ('vi' or 'en'), chosen once per page load. */
export const LOCALE_STATE_KEY = 'svc:auth:locale'

/** The pages' language (plugin 01.locale chooses it from appConfig.svcAuth.locale). */
export function useAuthLocale(): Ref<Locale> {
  return useState<Locale>(LOCALE_STATE_KEY, () => DEFAULT_LOCALE)
}

/** Key of the shared client state that says how the login page logs in (filled by the server render). */
export const LOGIN_METHOD_STATE_KEY = 'svc:auth:login'

/** How the login page logs in: the IAM's form, or the OpenID Provider (`sso`). */
export function useLoginMethod(): Ref<LoginMethod> {
  return useState<LoginMethod>(LOGIN_METHOD_STATE_KEY, () => ({ sso: false, autoRedirect: false }))
}
