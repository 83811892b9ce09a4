import { computed, type Ref } from 'vue'
import type { AuthUser, LoginCredentials, SessionResponse } from '../../shared/types'
import { safeRedirect } from '../../shared/redirect'
import { AppError } from '../utils/app-error'

/** Key of the shared client state that holds the signed-in user (never the token). */
export const AUTH_STATE_KEY = 'svc:auth:user'

/** The shared user state (null when signed out). */
export function useAuthUser(): Ref<AuthUser | null> {
  return useState<AuthUser | null>(AUTH_STATE_KEY, () => null)
}

/**
 * The session on the client: `user`, `isAuthenticated`, `login(credentials)`, `logout(redirect?)`, `refresh()`.
 * Errors are AppError (status, message).
 */
export function useAuth() {
  const user = useAuthUser()
  const requestFetch = useRequestFetch()

  async function login(credentials: LoginCredentials): Promise<AuthUser> {
    try {
      const answer = await $fetch<{ user: AuthUser }>('/auth/login', { method: 'POST', body: credentials })
      user.value = answer.user
      return answer.user
    }
    catch (error) {
      throw AppError.from(error)
    }
  }

  /** Re-reads GET /auth/session (fresh permissions); a failure counts as signed out. */
  async function refresh(): Promise<AuthUser | null> {
    try {
      const answer = await requestFetch<SessionResponse>('/auth/session')
      user.value = answer.user
    }
    catch {
      user.value = null
    }
    return user.value
  }

  /** Browser navigation to GET /auth/logout, which removes the cookie and comes back to an internal path. */
  async function logout(redirect = '/'): Promise<void> {
    user.value = null
    await navigateTo(`/auth/logout?redirect=${encodeURIComponent(safeRedirect(redirect))}`, { external: true })
  }

  return {
    user: computed(() => user.value),
    isAuthenticated: computed(() => user.value !== null),
    login,
    logout,
    refresh,
  }
}
