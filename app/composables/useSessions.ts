import { ref } from 'vue'
import type { UserSession } from '../../shared/types'
import { LOGIN_PATH } from '../../shared/guard'
import { AppError } from '../utils/app-error'
import { announceAuthChange } from '../lib/auth-channel'
import { useAuthExpiresAt, useAuthIdleExpiresAt, useAuthUser } from '../lib/auth-state'

/**
 * The signed-in user's own sessions (GET /auth/sessions): `sessions` (the current one first, `current: true`),
 * `list()` to read them again, `end(id)` to end one (ending the current one is a logout: the browser goes to the login
 * page, and this browser's other tabs follow), `endOthers()` to end every other one (how many). Errors are AppError
 * (status, message); a 401 means this session is over: the browser goes to the login page, as useApi does.
 */
export function useSessions() {
  const sessions = ref<UserSession[]>([])
  const user = useAuthUser()
  const expiresAt = useAuthExpiresAt()
  const idleExpiresAt = useAuthIdleExpiresAt()
  const route = useRoute()

  /** This session is over (ended elsewhere, or here): the login page, the other tabs told. */
  async function leave(change: 'ended' | 'logout', back?: string): Promise<void> {
    user.value = null
    expiresAt.value = null
    idleExpiresAt.value = null
    sessions.value = []
    announceAuthChange(change)
    await navigateTo(back === undefined ? LOGIN_PATH : `${LOGIN_PATH}?redirect=${encodeURIComponent(back)}`)
  }

  async function call<T>(path: string, options: { method?: 'POST', body?: Record<string, unknown> } = {}): Promise<T> {
    try {
      return await $fetch<T>(path, options) as T
    }
    catch (error) {
      const failure = AppError.from(error)
      if (failure.status === 401) await leave('ended', route.fullPath)
      throw failure
    }
  }

  /** Reads the list again; also answers it. */
  async function list(): Promise<UserSession[]> {
    sessions.value = (await call<{ sessions: UserSession[] }>('/auth/sessions')).sessions
    return sessions.value
  }

  /** Ends one session (an id of the list); the current one is a logout. */
  async function end(id: string): Promise<void> {
    const { current } = await call<{ current: boolean }>('/auth/sessions/end', { method: 'POST', body: { id } })
    if (current) return leave('logout')
    sessions.value = sessions.value.filter(session => session.id !== id)
  }

  /** Ends every other session of this user; answers how many were ended. */
  async function endOthers(): Promise<number> {
    const { ended } = await call<{ ended: number }>('/auth/sessions/end-others', { method: 'POST' })
    sessions.value = sessions.value.filter(session => session.current)
    return ended
  }

  return { sessions, list, end, endOthers }
}
