/** Fitting a session into the cookie budget by dropping what GET /auth/session re-reads from the IAM. Pure. */
import { COOKIE_BUDGET_BYTES, setCookieLineBytes } from './cookie'
import type { SessionPayload } from './seal'

export type BudgetResult
  = | { ok: true, setCookie: string, trimmed: 'none' | 'permissions' | 'roles' }
    | { ok: false, bytes: number }

/**
 * Tries the payload as it is, then without the stored permissions, then without roles too.
 * `toSetCookie` seals a payload and returns its whole Set-Cookie value.
 */
export function fitSessionToBudget(payload: SessionPayload, toSetCookie: (payload: SessionPayload) => string): BudgetResult {
  const candidates: Array<[SessionPayload, 'none' | 'permissions' | 'roles']> = [
    [payload, 'none'],
    [{ ...payload, user: { ...payload.user, permissions: [] } }, 'permissions'],
    [{ ...payload, user: { ...payload.user, permissions: [], roles: [] } }, 'roles'],
  ]
  let bytes = 0
  for (const [candidate, trimmed] of candidates) {
    const setCookie = toSetCookie(candidate)
    bytes = setCookieLineBytes(setCookie)
    if (bytes <= COOKIE_BUDGET_BYTES) return { ok: true, setCookie, trimmed }
  }
  return { ok: false, bytes }
}
