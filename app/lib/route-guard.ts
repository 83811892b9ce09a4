import { abortNavigation, createError, defineNuxtRouteMiddleware, navigateTo, useAppConfig, useError, useNuxtApp } from '#app'
import { decideRoute, FORBIDDEN_MESSAGE } from '../../shared/guard'
import { leaveLoginPage } from './after-login'
import { currentSessionEnd, useAuthExpiresAt, useAuthIdleExpiresAt, useAuthUser } from './auth-state'

/**
 * The route guard: every page needs a session unless its meta says `auth: false`; meta `permissions` needs all of
 * them, else the 403 error page. Client-side gating tidies the UI only: the backend checks every request.
 * nuxt.config.ts registers it as the global route middleware `svc-auth-guard`, ahead of the app's own: it is not
 * found by a file's name, so an app's `app/middleware/auth.global.ts` is one more middleware, never a replacement.
 */
export default defineNuxtRouteMiddleware((to) => {
  const nuxtApp = useNuxtApp()
  // The server already rendered this page's error (the 403 of a direct load): hydrating it must not raise it again,
  // which Nuxt would log as an error caught during app initialization.
  if (import.meta.client && nuxtApp.isHydrating && useError().value) return
  // A session whose end (or idle end) has passed is over: the next navigation goes to the login page.
  const expiresAt = useAuthExpiresAt()
  const idleExpiresAt = useAuthIdleExpiresAt()
  const end = import.meta.client ? currentSessionEnd(expiresAt, idleExpiresAt) : null
  if (end !== null && Date.now() >= end) {
    useAuthUser().value = null
    expiresAt.value = null
    idleExpiresAt.value = null
  }
  const decision = decideRoute(
    { path: to.path, fullPath: to.fullPath, meta: { auth: to.meta.auth, permissions: to.meta.permissions }, redirectQuery: to.query.redirect },
    useAuthUser().value,
    useAppConfig().svcAuth?.homePath,
  )
  if (decision.action === 'login') return navigateTo(decision.to)
  if (decision.action === 'redirect') return leaveLoginPage(decision.to)
  if (decision.action === 'forbidden') return forbidden()
})

/**
 * The 403 error page. Missing permissions are the user's lot, not a failure of the app: a server render answers
 * the 403 page without `fatal` (Nitro logs fatal errors at `error` level with their stack), and the first page of
 * an app rendered in the browser (ssr: false) shows it without Nuxt's `app:error` hook (which logs every error raised
 * while the app starts as [NUXT_E1005]). A later navigation in the browser shows it in place of the app (`fatal`).
 */
function forbidden() {
  const nuxtApp = useNuxtApp()
  const error = { statusCode: 403, statusMessage: 'Forbidden', message: FORBIDDEN_MESSAGE, data: { message: FORBIDDEN_MESSAGE } }
  // A server render shows the error a middleware returns.
  if (import.meta.server) return createError(error)
  // The first page of an app rendered in the browser: the error page, the hook not called (the page is never mounted).
  if (nuxtApp.isHydrating && !nuxtApp.payload.serverRendered) {
    nuxtApp.payload.error = createError(error)
    return
  }
  return abortNavigation(createError({ ...error, fatal: true }))
}
