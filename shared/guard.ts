import { vi } from './messages'
import { hasAllPermissions } from './permissions'
import { safeRedirect } from './redirect'
import type { AuthUser } from './types'

/** Path of the login page (GET); POST on the same path is the login route. */
export const LOGIN_PATH = '/auth/login'

/** The 403 page's message (the contract's Vietnamese; the error page shows it in the page's language). */
export const FORBIDDEN_MESSAGE = vi.errors.forbiddenPage

/** What a page declares in definePageMeta. */
export interface GuardMeta {
  auth?: boolean
  permissions?: readonly string[]
}

export type GuardDecision
  = | { action: 'allow' }
    | { action: 'login', to: string }
    | { action: 'redirect', to: string }
    | { action: 'forbidden' }

/**
 * The route guard's decision, pure: every page needs a session unless `auth: false`; no session goes to the login
 * page with the original full path; `permissions` need all of them. A signed-in user opening the login page goes on
 * to its internal `redirect` (else `home`, the page after login: app config `svcAuth.homePath`, default '/').
 */
export function decideRoute(target: { path: string, fullPath: string, meta: GuardMeta, redirectQuery?: unknown }, user: AuthUser | null, home = '/'): GuardDecision {
  if (target.path === LOGIN_PATH) {
    return user ? { action: 'redirect', to: safeRedirect(target.redirectQuery, home) } : { action: 'allow' }
  }
  if (target.meta.auth === false) return { action: 'allow' }
  if (!user) return { action: 'login', to: `${LOGIN_PATH}?redirect=${encodeURIComponent(target.fullPath)}` }
  const needed = target.meta.permissions ?? []
  return hasAllPermissions(user, needed) ? { action: 'allow' } : { action: 'forbidden' }
}
