import { getQuery } from 'h3'
import { LOGIN_PATH } from '../../../shared/guard'
import { safeRedirect } from '../../../shared/redirect'
import { GatewayError, RequestError, MESSAGES } from '../../http/errors'
import { defineGatewayRoute, redirectTo } from '../../http/route'
import { audit } from '../../http/audit'
import { ProviderLoginError, startProviderLogin } from '../../oidc/login'
import { isOidc } from '../../oidc/provider'

/**
 * GET /auth/sso?redirect=<path>: with APP_AUTH_KIND=oidc, 302 to the OpenID Provider's login (code + PKCE, state and
 * nonce bound to this browser by a 10-minute cookie); before the provider's discovery succeeded, to the login page with
 * `?error=ssoUnavailable`. Without OIDC: 404.
 */
export default defineGatewayRoute(async (event) => {
  if (!isOidc()) throw new RequestError(404, MESSAGES.ssoNotConfigured)
  let location: string
  try {
    location = await startProviderLogin(event)
  }
  catch (error) {
    // A browser asking before the provider's discovery succeeded, or a pushed request (PAR) that failed: the login
    // page says so, in words.
    const reason = error instanceof ProviderLoginError ? error.reason : error instanceof GatewayError && error.statusCode === 503 ? 'ssoUnavailable' : undefined
    if (!reason) throw error
    if (error instanceof ProviderLoginError) audit(event, 'login.failure', { reason, detail: error.message }, 'warn')
    location = `${LOGIN_PATH}?error=${reason}&redirect=${encodeURIComponent(safeRedirect(getQuery(event).redirect))}`
  }
  redirectTo(event, location)
})
