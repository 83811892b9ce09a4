import { getQuery } from 'h3'
import { encodeLocation, safeRedirect } from '../../../shared/redirect'
import { defineGatewayRoute } from '../../utils/gateway-route'
import { clearGatewaySession } from '../../utils/session-cookie'

/** GET /auth/logout: removes svc_session and sends the browser to an internal `redirect` path (else '/'). */
export default defineGatewayRoute((event) => {
  clearGatewaySession(event)
  const res = event.node.res
  res.statusCode = 302
  res.setHeader('location', encodeLocation(safeRedirect(getQuery(event).redirect)))
  res.end()
})
