import { decideRoute, FORBIDDEN_MESSAGE } from '../../shared/guard'
import { leaveLoginPage } from '../lib/after-login'
import { currentSessionEnd, useAuthExpiresAt, useAuthIdleExpiresAt, useAuthUser } from '../lib/auth-state'

/**
 * Every page needs a session unless its meta says `auth: false`; meta `permissions` needs all of them, else the
 * 403 error page. Client-side gating tidies the UI only: the backend checks every request.
 */
export default defineNuxtRouteMiddleware((to) => {
  // The server already rendered this page's error (the 403 of a direct load): hydrating it must not raise it again,
  // which Nuxt would log as an error caught during app initialization.
  if (import.meta.client && useNuxtApp().isHydrating && useError().value) return
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
  if (decision.action === 'forbidden') {
    return abortNavigation(createError({ statusCode: 403, statusMessage: 'Forbidden', message: FORBIDDEN_MESSAGE, data: { message: FORBIDDEN_MESSAGE }, fatal: true }))
  }
})
