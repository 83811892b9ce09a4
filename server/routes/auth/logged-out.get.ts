import { RequestError, MESSAGES } from '../../http/errors'
import { defineGatewayRoute, redirectTo } from '../../http/route'
import { finishProviderLogout } from '../../oidc/logout'
import { isOidc } from '../../oidc/provider'

/**
 * GET /auth/logged-out: where the OpenID Provider's logout sends the browser back (the default post_logout_redirect_uri).
 * The logout's state is checked when the provider echoes it, and the browser goes on to the `redirect` given to
 * /auth/logout ('/' when the state is not this browser's or the 10-minute cookie is gone). Without OIDC: 404.
 */
export default defineGatewayRoute((event) => {
  if (!isOidc()) throw new RequestError(404, MESSAGES.ssoNotConfigured)
  redirectTo(event, finishProviderLogout(event))
})
