import { getQuery } from 'h3'
import { useAppConfig } from 'nitropack/runtime'
import { acceptedLanguages, messagesFor, pickLocale, type MessageOverrides } from '../../../shared/messages'
import { encodeLocation, safeRedirect } from '../../../shared/redirect'
import { logoutConfirmationHtml } from '../../core/logout-page'
import { audit } from '../../lib/audit'
import { defineGatewayRoute } from '../../lib/gateway-route'
import { notifyIamLogout } from '../../lib/iam-auth'
import { revokeSession } from '../../lib/revocations'
import { clearGatewaySession, readEverySession } from '../../lib/session-cookie'

/**
 * GET /auth/logout: revokes the session (a copy of the cookie is no session anywhere afterwards), tells the IAM when
 * APP_AUTH_ENDPOINTS_LOGOUT is set, removes svc_session and sends the browser to an internal `redirect` (else '/').
 * Reached by another site's navigation (Sec-Fetch-Site cross-site or same-site), it only asks (a page that cannot
 * be framed); the answer's button is then a same-origin navigation.
 */
export default defineGatewayRoute(async (event) => {
  const res = event.node.res
  const redirect = safeRedirect(getQuery(event).redirect)
  const site = event.node.req.headers['sec-fetch-site']
  if (site === 'cross-site' || site === 'same-site') {
    // In the pages' language (appConfig.svcAuth.locale; 'auto' reads Accept-Language), with the app's own texts.
    const { locale: setting, messages } = (useAppConfig().svcAuth ?? {}) as { locale?: unknown, messages?: MessageOverrides }
    const locale = pickLocale(setting, acceptedLanguages(event.node.req.headers['accept-language']))
    const html = logoutConfirmationHtml(`/auth/logout?redirect=${encodeURIComponent(redirect)}`, locale, messagesFor(locale, messages))
    res.statusCode = 200
    if (setting === 'auto') res.setHeader('vary', 'Accept-Language')
    res.setHeader('content-type', 'text/html; charset=utf-8')
    res.setHeader('content-security-policy', 'default-src \'none\'; style-src \'unsafe-inline\'; frame-ancestors \'none\'')
    res.setHeader('x-frame-options', 'DENY')
    res.end(html)
    return
  }
  // Every value that opens is one of ours (a planted second cookie included): each is revoked.
  for (const session of readEverySession(event)) {
    await revokeSession(session)
    audit(event, 'logout', { userId: session.user.id, name: session.user.name })
    if (session.accessToken) notifyIamLogout(session.accessToken)
  }
  clearGatewaySession(event)
  res.statusCode = 302
  res.setHeader('location', encodeLocation(redirect))
  res.end()
})
