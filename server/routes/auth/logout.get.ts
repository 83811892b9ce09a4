import { getQuery } from 'h3'
import { useAppConfig } from 'nitropack/runtime'
import { acceptedLanguages, messagesFor, pickLocale, type MessageOverrides } from '../../../shared/messages'
import { safeRedirect } from '../../../shared/redirect'
import { logoutConfirmationHtml } from '../../core/http/logout-page'
import { audit } from '../../http/audit'
import { defineGatewayRoute, redirectTo } from '../../http/route'
import { notifyIamLogout } from '../../iam/auth'
import { OUTCOME_ATTRIBUTE, traced } from '../../ops/tracing/spans'
import { endProviderSession, providerLogoutUrl } from '../../oidc/logout'
import { isOidc } from '../../oidc/provider'
import { clearGatewaySession, readEverySession } from '../../session/cookie'
import { revokeSession } from '../../session/revocations'

/**
 * GET /auth/logout: revokes the session (a copy of the cookie is no session anywhere afterwards), tells the IAM when
 * APP_AUTH_ENDPOINTS_LOGOUT is set, removes svc_session and sends the browser to an internal `redirect` (else '/').
 * Reached by another site's navigation (Sec-Fetch-Site cross-site or same-site), it only asks (a page that cannot
 * be framed); the answer's button is then a same-origin navigation. With an OpenID Provider (APP_AUTH_KIND=oidc) the
 * session's tokens are dropped on every instance and the browser goes on to the provider's logout (client_id,
 * id_token_hint, post_logout_redirect_uri, a state), which comes back through GET /auth/logged-out to `redirect`.
 * With tracing on, a `logout` span: outcome `ended` (with the sessions it revoked) or `no-session`.
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
  const sessions = readEverySession(event)
  const idToken = await traced('logout', 'internal', {}, async (span) => {
    span?.setAttributes({ [OUTCOME_ATTRIBUTE]: sessions.length ? 'ended' : 'no-session', 'svc_gateway.sessions': sessions.length })
    let hint: string | undefined
    for (const session of sessions) {
      await revokeSession(session)
      audit(event, 'logout', { userId: session.user.id, name: session.user.name })
      if (session.accessToken) notifyIamLogout(session.accessToken)
      // Each OpenID session's tokens go (the refresh token revoked at the provider); the first one's ID token is the hint.
      if (isOidc()) {
        const ended = await endProviderSession(session)
        hint ??= ended
      }
    }
    return hint
  })
  clearGatewaySession(event)
  // With an OpenID Provider, its own logout next (end_session_endpoint), which comes back through /auth/logged-out to
  // `redirect`; a provider without one: `redirect` at once.
  redirectTo(event, (isOidc() && sessions.length && providerLogoutUrl(event, idToken, redirect)) || redirect)
})
