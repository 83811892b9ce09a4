import { getQuery, type H3Event } from 'h3'
import { combineNeeds, meetsNeed, needOf, parseAcrValues, parseMaxAge, type AuthLevelNeed } from '../core/session/auth-level'
import { oidcSettings } from './provider'

/**
 * Step-up at the login trip: GET /auth/sso may ask for a login level (`acr_values`, `max_age`: a step-up, from the
 * proxy's answer or useAuth().stepUp()), on top of APP_OIDC_ACR_VALUES / APP_OIDC_MAX_AGE for every login; the
 * callback checks the ID token gives it (login.ts retires the browser's earlier session: a different user is a new
 * login, never a silent switch).
 */

/** What a login trip asks of the provider: the level it needs, and whether it is a step-up (asked by the query). */
export function tripNeed(event: H3Event): { need: AuthLevelNeed | undefined, stepUp: boolean } {
  const query = getQuery(event)
  const acr = typeof query.acr_values === 'string' ? parseAcrValues(query.acr_values) : undefined
  const asked = needOf(acr, typeof query.max_age === 'string' ? parseMaxAge(query.max_age) : undefined)
  const settings = oidcSettings()
  return { need: combineNeeds(asked, needOf(settings.acrValues, settings.maxAge)), stepUp: !!asked }
}

/** The authorization request's parameters for a need; a step-up also asks the provider to authenticate again. */
export function needParameters(need: AuthLevelNeed | undefined, stepUp: boolean): Record<string, string> {
  return {
    ...(need?.acr.length ? { acr_values: need.acr.join(' ') } : {}),
    ...(need?.maxAge !== undefined ? { max_age: String(need.maxAge) } : {}),
    ...(stepUp ? { prompt: 'login' } : {}),
  }
}

/** Whether the ID token's claims meet the trip's need (a missing `acr` or `auth_time` it looks at is unmet). */
export function claimsMeetNeed(claims: { acr?: unknown, auth_time?: unknown }, need: AuthLevelNeed | undefined): boolean {
  return meetsNeed({
    ...(typeof claims.acr === 'string' ? { acr: claims.acr } : {}),
    ...(typeof claims.auth_time === 'number' ? { authTime: claims.auth_time } : {}),
  }, need, Date.now())
}
