import { computed } from 'vue'
import type { AuthUser, LoginCredentials, SessionResponse, StepUpHint } from '../../shared/types'
import { LOGIN_PATH } from '../../shared/guard'
import { vi } from '../../shared/messages'
import { safeRedirect } from '../../shared/redirect'
import { keepsSecureCookies } from '../../shared/secure-cookies'
import { AppError } from '../utils/app-error'
import { announceAuthChange } from '../lib/auth-channel'
import { useAuthExpiresAt, useAuthIdleExpiresAt, useAuthUser, useLoginMethod } from '../lib/auth-state'

/**
 * The session on the client: `user`, `isAuthenticated`, `expiresAt` (ms, when the session ends), `idleExpiresAt` (ms,
 * when it goes idle unless used; null without the gateway's idle timeout), `login(credentials?)`,
 * `logout(redirect?)`, `refresh()`, `stepUp(error?)` (OpenID Connect: a stronger login, back to this page). Errors are AppError (status, message); a login whose session cookie the browser
 * did not keep (a page over plain http) is one too. Other tabs hear of logins and logouts.
 */
export function useAuth() {
  const user = useAuthUser()
  const expiresAt = useAuthExpiresAt()
  const idleExpiresAt = useAuthIdleExpiresAt()
  const requestFetch = useRequestFetch()
  const router = useRouter()
  const loginMethod = useLoginMethod()

  /**
   * Re-reads GET /auth/session (fresh permissions, end of the session); a failure counts as signed out. It counts as
   * activity for the gateway's idle timeout; `peek: true` asks without that (a check made by no person).
   */
  async function refresh(options: { peek?: boolean } = {}): Promise<AuthUser | null> {
    try {
      const answer = await requestFetch<SessionResponse>('/auth/session', options.peek ? { headers: { 'x-session-peek': '1' } } : {})
      user.value = answer.user
      expiresAt.value = answer.user ? answer.expiresAt ?? null : null
      idleExpiresAt.value = answer.user ? answer.idleExpiresAt ?? null : null
    }
    catch {
      user.value = null
      expiresAt.value = null
      idleExpiresAt.value = null
    }
    return user.value
  }

  /**
   * Logs in with the IAM's credentials. With an OpenID Provider (APP_AUTH_KIND=oidc) the browser goes to the
   * provider's login instead (GET /auth/sso), and without credentials to the login page; either comes back to
   * `redirect` (default: this page). The promise does not settle then: the page is left.
   */
  async function login(credentials?: LoginCredentials, redirect?: string): Promise<AuthUser> {
    if (!credentials || loginMethod.value.sso) {
      const back = encodeURIComponent(safeRedirect(redirect ?? router.currentRoute.value.fullPath))
      // The provider's login; without credentials for the contract IAM, its login page.
      if (loginMethod.value.sso) await navigateTo(`/auth/sso?redirect=${back}`, { external: true })
      else await navigateTo(`${LOGIN_PATH}?redirect=${back}`)
      return new Promise<never>(() => {})
    }
    let answer: { user: AuthUser }
    try {
      answer = await $fetch<{ user: AuthUser }>('/auth/login', { method: 'POST', body: credentials })
    }
    catch (error) {
      throw AppError.from(error)
    }
    user.value = answer.user
    // The end of the session comes with GET /auth/session (POST /auth/login answers { user } as the contract says).
    await refresh()
    // No session right after a login over plain http: the browser dropped the Secure cookie. Say so, rather than
    // leave for a page that sends the user back to the login page without a word.
    if (!user.value && import.meta.client && !keepsSecureCookies(location.protocol, location.host)) throw new AppError(0, vi.errors.plainHttp)
    announceAuthChange('login')
    return user.value ?? answer.user
  }

  /**
   * Step-up (OpenID Connect): the browser goes to the provider for the stronger or fresher login a step-up answer asked
   * for (`hint`: the AppError of that 401, or its `stepUp`), and comes back to `redirect` (default: this page), the
   * same user. The promise does not settle then: the page is left.
   */
  async function stepUp(hint?: AppError | StepUpHint | null, redirect?: string): Promise<never> {
    const asked = hint instanceof AppError ? hint.stepUp : hint
    const query = new URLSearchParams({ redirect: safeRedirect(redirect ?? router.currentRoute.value.fullPath) })
    if (asked?.acr) query.set('acr_values', asked.acr)
    if (typeof asked?.maxAge === 'number') query.set('max_age', String(asked.maxAge))
    await navigateTo(`/auth/sso?${query}`, { external: true })
    return new Promise<never>(() => {})
  }

  /** Browser navigation to GET /auth/logout, which ends the session and comes back to an internal path. */
  async function logout(redirect = '/'): Promise<void> {
    user.value = null
    expiresAt.value = null
    idleExpiresAt.value = null
    announceAuthChange('logout')
    await navigateTo(`/auth/logout?redirect=${encodeURIComponent(safeRedirect(redirect))}`, { external: true })
  }

  return {
    user: computed(() => user.value),
    isAuthenticated: computed(() => user.value !== null),
    expiresAt: computed(() => expiresAt.value),
    idleExpiresAt: computed(() => idleExpiresAt.value),
    login,
    logout,
    refresh,
    stepUp,
  }
}
