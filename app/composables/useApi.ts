import type { NitroFetchOptions } from 'nitropack'
import { AppError } from '../utils/app-error'
import { announceAuthChange } from '../lib/auth-channel'
import { useAuth } from './useAuth'

/**
 * The fetch helper for the backend behind /api/**. A 401 means the session is over: the session is re-read and,
 * when it is gone, the browser goes to the login page with the current path as `redirect`. Errors are AppError.
 */
export function useApi() {
  const { refresh } = useAuth()
  const route = useRoute()
  const requestFetch = useRequestFetch()

  return async function api<T>(path: string, options: NitroFetchOptions<string> = {}): Promise<T> {
    try {
      return await requestFetch<T>(`/api${path.startsWith('/') ? path : `/${path}`}`, options as object) as T
    }
    catch (error) {
      const failure = AppError.from(error)
      if (failure.status === 401 && import.meta.client && !(await refresh({ peek: true }))) {
        announceAuthChange('ended')
        await navigateTo(`/auth/login?redirect=${encodeURIComponent(route.fullPath)}`)
      }
      throw failure
    }
  }
}
