import { encodeLocation } from '../../../shared/redirect'
import { RequestError, MESSAGES } from '../../lib/gateway-error'
import { defineGatewayRoute } from '../../lib/gateway-route'
import { isOidc } from '../../lib/oidc/provider'
import { startProviderLogin } from '../../lib/oidc/login'

/**
 * GET /auth/sso?redirect=<path>: with APP_AUTH_KIND=oidc, 302 to the OpenID Provider's login (code + PKCE, state and
 * nonce bound to this browser by a 10-minute cookie); 503 until the provider's discovery succeeded. Without OIDC: 404.
 */
export default defineGatewayRoute(async (event) => {
  if (!isOidc()) throw new RequestError(404, MESSAGES.ssoNotConfigured)
  const location = await startProviderLogin(event)
  event.node.res.statusCode = 302
  event.node.res.setHeader('location', encodeLocation(location))
  event.node.res.end()
})
