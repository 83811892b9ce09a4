import { RequestError, MESSAGES } from '../../http/errors'
import { readFormFields } from '../../http/json-body'
import { defineGatewayRoute } from '../../http/route'
import { backchannelLogout } from '../../oidc/backchannel'
import { isOidc } from '../../oidc/provider'

/**
 * POST /auth/backchannel-logout: the OpenID Provider says a user logged out there (form field `logout_token`).
 * 200 when the token is valid (its sessions ended on every instance), 400 otherwise; 404 without OIDC.
 */
export default defineGatewayRoute(async (event) => {
  if (!isOidc()) throw new RequestError(404, MESSAGES.ssoNotConfigured)
  const token = (await readFormFields(event)).get('logout_token')
  if (!token) throw new RequestError(400, MESSAGES.logoutTokenInvalid)
  await backchannelLogout(token)
  event.node.res.statusCode = 200
  event.node.res.end()
})
