import { LOGIN_PATH } from '../../shared/guard'
import { safeRedirect } from '../../shared/redirect'
import { useAuth } from '../composables/useAuth'
import { leaveLoginPage } from '../lib/after-login'
import { currentSessionEnd, useAuthExpiresAt, useAuthIdleExpiresAt, useAuthUser, useLoginMethod } from '../lib/auth-state'
import type { LoginMethod } from '../../shared/types'
import { announceAuthChange, onAuthChange } from '../lib/auth-channel'

/**
 * Fills the shared user state ('svc:auth:user') and the session's ends ('svc:auth:expiresAt', 'svc:auth:idleExpiresAt') with GET /auth/session
 * once at start: on the server during SSR (forwarding the browser's cookie, so the first HTML already knows the user),
 * and on the client only when no server render did it. The token never enters this state.
 * In the browser it also keeps tabs in step: a login elsewhere shows the user here; a logout or a session end
 * elsewhere (or here, when the session's end passes) sends this tab to the login page with its path as `redirect`;
 * a tab that starts without a session (after a logout by any path) makes the others check with the server; a tab in
 * view checks now and then whether its session was ended elsewhere (svcAuth.sessionCheckSeconds).
 */
export default defineNuxtPlugin({
  name: 'svc-auth',
  async setup() {
    // A page prerendered at build time has no session to read: the browser reads it when the page runs.
    if (import.meta.prerender) return
    const loaded = useState<boolean>('svc:auth:loaded', () => false)
    if (!(import.meta.client && loaded.value)) {
      // The page's own request was the activity (the gateway slid the idle timeout on it): this read is none.
      await useAuth().refresh({ peek: true })
      loaded.value = true
    }
    if (import.meta.server) {
      // How to log in, as the gateway's configuration says (server/plugins/gateway-config.ts).
      const method = useRequestEvent()?.context.svcAuthLogin as LoginMethod | undefined
      if (method) useLoginMethod().value = method
      // HTML that holds a user must not be cached by anyone.
      if (useAuthUser().value) useRequestEvent()?.node.res.setHeader('cache-control', 'no-store')
      return
    }
    followSession()
    // A tab that starts without a session says so: a logout by a plain link or a typed /auth/logout ends here, and
    // the other tabs must hear of it too (they check with the server; see followSession).
    if (!useAuthUser().value) announceAuthChange('gone')
  },
})

/** Client only: other tabs' announcements and this session's own end. */
function followSession(): void {
  const router = useRouter()
  const { refresh } = useAuth()
  const user = useAuthUser()
  const expiresAt = useAuthExpiresAt()
  const idleExpiresAt = useAuthIdleExpiresAt()
  // This tab's checks with the server are no activity: an unattended tab must not keep its session alive.
  const check = () => refresh({ peek: true })

  const toLogin = async () => {
    const current = router.currentRoute.value
    if (current.path === LOGIN_PATH) return
    await navigateTo(`${LOGIN_PATH}?redirect=${encodeURIComponent(current.fullPath)}`)
  }
  onAuthChange(async (change) => {
    if (change === 'login') {
      await check()
      // A tab waiting on the login page moves on to its internal `redirect`, as after its own login.
      const current = router.currentRoute.value
      if (current.path === LOGIN_PATH && user.value) await leaveLoginPage(safeRedirect(current.query.redirect, useAppConfig().svcAuth?.homePath))
      return
    }
    if (change === 'gone') {
      // Another tab started without a session. A tab without a user has nothing to do (no loop between tabs on the
      // login page); one with a user asks the server, which has the last word, and leaves only when it is gone.
      if (!user.value || await check()) return
      expiresAt.value = null
      await toLogin()
      return
    }
    user.value = null
    expiresAt.value = null
    await toLogin()
  })

  // When the session's end passes (its 8 hours, its token, or its idle end), make sure (the server has the last word)
  // and leave for the login page.
  let timer: ReturnType<typeof setTimeout> | undefined
  const arm = (end: number | null) => {
    clearTimeout(timer)
    if (!end) return
    // setTimeout holds at most ~24.8 days; a session lasts 8 hours.
    timer = setTimeout(async () => {
      // Another tab's activity (or this tab's /api calls) moved the idle end on: the svc_idle cookie says so.
      const later = currentSessionEnd(expiresAt, idleExpiresAt)
      if (later !== null && later > Date.now()) return arm(later)
      // Still a session (a clock running ahead of the server's): look again at the end the server gives.
      if (await check()) return arm(Math.max(currentSessionEnd(expiresAt, idleExpiresAt) ?? 0, Date.now() + 5_000))
      announceAuthChange('ended')
      await toLogin()
    }, Math.max(0, end - Date.now()) + 250)
  }
  watch([expiresAt, idleExpiresAt], () => arm(currentSessionEnd(expiresAt, idleExpiresAt)), { immediate: true })

  // A session ended elsewhere (from another browser's list of sessions, by an administrator) reaches no tab of this
  // browser by itself: a tab in view asks every svcAuth.sessionCheckSeconds, and when it comes into view, with
  // GET /auth/verify (the cookie and the revocations: no IAM call; a peek, so no activity), and leaves for the login
  // page once the server confirms that the session is gone.
  const every = (useAppConfig().svcAuth?.sessionCheckSeconds ?? 20) * 1000
  if (every <= 0) return
  const stillThere = async () => {
    if (!user.value || document.visibilityState !== 'visible') return
    const answer = await fetch('/auth/verify', { headers: { 'x-session-peek': '1' } }).catch(() => undefined)
    if (answer?.status !== 401 || await check()) return
    expiresAt.value = null
    announceAuthChange('ended')
    await toLogin()
  }
  setInterval(() => void stillThere(), every)
  document.addEventListener('visibilitychange', () => void stillThere())
}
