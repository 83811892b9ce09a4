import { defineNitroPlugin } from 'nitropack/runtime'
import { LOGIN_PATH } from '../../shared/guard'
import type { LoginMethod } from '../../shared/types'
import { describeRedis } from '../core/config/redis-config'
import { missingSettingLine, missingSettings, settingWarnings } from '../core/config/start-checks'
import { ConfigError } from '../core/config/types'
import { startStores } from '../gate/stores'
import { readClientKey } from '../oidc/client-auth'
import { dropSessionTokens } from '../oidc/logout'
import { startOidc, stopOidc } from '../oidc/provider'
import { oidcSessionUser } from '../oidc/token-cache'
import { oidcAccessToken, oidcSessionLevel } from '../oidc/tokens'
import { loggingSettings, useGatewayConfig } from '../ops/config'
import { createLogger, routeConsoleToLogger, setLogger } from '../ops/logger'
import { startMetricsListener } from '../ops/metrics-listener'
import { keepTickShape } from '../ops/tick-shape'
import { startTracing } from '../ops/tracing/tracing'
import { onResealed } from '../session/idle'
import { keepsSessionCookie } from '../session/plain-http'
import { journalPendingRevocations } from '../session/revocations'
import { noteSessionSeen } from '../session/session-index-store'
import { takeTokensFrom } from '../session/token'
import { onSessionEnd } from '../session/user-sessions'

/**
 * The gateway's start: the logger (console.* of the whole server goes through it), then the whole configuration is
 * read and checked (a missing or short APP_SESSION_SECRET, or any invalid APP_* value, stops the production server
 * with a message naming the variable; a missing IAM address or backend is an error line naming it, settings that likely
 * do not work as meant a warning); then the metrics listener, the brute-force counters and
 * the shared revocations, tracing (OTEL_*, ops/tracing/), and the OpenID Provider's discovery (APP_AUTH_KIND=oidc, retried until it succeeds). With APP_KEEP_TICK_SHAPE (opt-in: it changes the whole process), one of Node's nextTick
 * entries is kept alive, so an idle spell cannot slow the proxy (ops/tick-shape.ts).
 */
export default defineNitroPlugin((nitroApp) => {
  // The prerenderer (public pages prerendered by route rules) runs in the build, where nothing of the gateway starts:
  // its pages are rendered without a session (app/plugins/02.auth.ts), their /api/** calls proxied without a token
  // (the configuration is read when first used, with a random session key: ops/config.ts).
  if (import.meta.prerender) return
  const log = setLogger(createLogger(loggingSettings()))
  if (!import.meta.dev) routeConsoleToLogger(log)
  let config
  try {
    config = useGatewayConfig().config
    if (config.oidc) readClientKey(config.oidc)
  }
  catch (error) {
    if (!(error instanceof ConfigError) || import.meta.dev) throw error
    log.fatal(`cấu hình không hợp lệ: ${error.message}`)
    process.exit(1)
  }
  // What is missing answers the contract's 500 when asked for, and keeps /readyz at 503 (gate/probes.ts).
  for (const variable of missingSettings(config)) log.error({ type: 'config', missing: variable }, missingSettingLine(variable))
  // `nuxt dev` serves the developer's own browser, with no proxy in front.
  const warnings = import.meta.dev ? [] : settingWarnings(config, !!(process.env.NITRO_SSL_CERT && process.env.NITRO_SSL_KEY))
  for (const warning of warnings) log.warn({ type: 'config' }, warning)
  if (config.redis) log.info({ type: 'config' }, `Redis: ${describeRedis(config.redis)}`)
  if (config.metrics.port) startMetricsListener(nitroApp, config.metrics, log)
  // How the login page logs in (the app's pages read it in their server render: plugin 02.auth), and, for a page
  // asked for over plain http, that the browser will drop the session cookie; that, and a login over plain http, is
  // said once in the log (session/plain-http.ts).
  const login: LoginMethod = config.kind === 'oidc' ? { sso: true, autoRedirect: config.oidc!.autoRedirect } : { sso: false, autoRedirect: false }
  nitroApp.hooks.hook('request', (event) => {
    const page = event.method === 'GET' && String(event.node.req.headers.accept ?? '').includes('text/html')
    const signIn = event.method === 'POST' && event.path.startsWith(LOGIN_PATH)
    event.context.svcAuthLogin = (page || signIn) && !keepsSessionCookie(event) ? { ...login, plainHttp: true } : login
  })
  // A re-seal by the idle timeout moves the session's last-seen time in its user's list of sessions.
  onResealed(noteSessionSeen)
  if (config.kind === 'oidc') {
    // An OpenID session's tokens, whole user and login level live beside it: the proxy, the tunnel and forward auth
    // find them through the session (the routes' permissions and step-up needs are checked on them).
    takeTokensFrom(oidcAccessToken, oidcSessionUser, oidcSessionLevel)
    // A session ended from its user's list (or by endSession) drops its tokens as a logout does.
    onSessionEnd(async (session) => {
      await dropSessionTokens(session.sid)
    })
  }
  // Tracing, when the OTEL_* variables ask for it (the built server only: server/node-server.ts listens once it is
  // on), before anything calls out: the provider's discovery waits for it.
  if (!import.meta.dev) void startTracing().catch(() => undefined)
  void startOidc()
  nitroApp.hooks.hook('close', stopOidc)
  // The server awaits them for its readiness (server/node-server.ts); started here so that `nuxt dev` has them too.
  void startStores()
  // After the drain (which waits for unwritten revocations): what Redis still has not taken goes to the journal.
  nitroApp.hooks.hook('close', journalPendingRevocations)
  if (config.keepTickShape) void keepTickShape()
})
