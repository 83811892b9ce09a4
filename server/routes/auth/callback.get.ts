import { LOGIN_PATH } from '../../../shared/guard'
import { audit } from '../../http/audit'
import { GatewayError, RequestError, MESSAGES } from '../../http/errors'
import { defineGatewayRoute, redirectTo } from '../../http/route'
import { OUTCOME_ATTRIBUTE, traced } from '../../ops/tracing/spans'
import { finishProviderLogin, ProviderLoginError } from '../../oidc/login'
import { isOidc } from '../../oidc/provider'
import { recordSession } from '../../session/user-sessions'

/**
 * GET /auth/callback: the OpenID Provider's answer. A good one seals the session and goes (302) to the page the login
 * started from; any failure (a provider error such as access_denied, a state this browser did not start, a used or
 * expired code, an ID token that does not check out) goes to the login page with `?error=<reason>` and the same
 * `redirect`, where the page says it in words. Never a 500, never a loop: the login page does not start again by
 * itself after an error. With tracing on, a `login` span whose outcome is `success` or the failure's reason.
 */
export default defineGatewayRoute(async (event) => {
  if (!isOidc()) throw new RequestError(404, MESSAGES.ssoNotConfigured)
  let location: string
  try {
    location = await traced('login', 'internal', {}, async (span) => {
      try {
        const login = await finishProviderLogin(event)
        // Into its user's list of sessions (past APP_SESSION_MAX_PER_USER the oldest end).
        await recordSession(event, login.session)
        span?.setAttribute(OUTCOME_ATTRIBUTE, 'success')
        return login.location
      }
      catch (error) {
        span?.setAttribute(OUTCOME_ATTRIBUTE, error instanceof ProviderLoginError ? error.reason : 'ssoFailed')
        throw error
      }
    })
  }
  catch (error) {
    const failure = error instanceof ProviderLoginError
      ? error
      : new ProviderLoginError(error instanceof GatewayError && error.statusCode === 503 ? 'ssoUnavailable' : 'ssoFailed', '/', (error as Error).message)
    audit(event, 'login.failure', { reason: failure.reason, detail: failure.message }, 'warn')
    location = failure.reason === 'retry'
      ? `/auth/sso?retry=1&redirect=${encodeURIComponent(failure.redirect)}`
      : `${LOGIN_PATH}?error=${failure.reason}${failure.redirect === '/' ? '' : `&redirect=${encodeURIComponent(failure.redirect)}`}`
  }
  redirectTo(event, location)
})
