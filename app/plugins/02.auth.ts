import { useAuth, useAuthUser } from '../composables/useAuth'

/**
 * Fills the shared user state ('svc:auth:user') with GET /auth/session once at start: on the server during SSR
 * (forwarding the browser's cookie, so the first HTML already knows the user), and on the client only when no
 * server render did it. The token never enters this state.
 */
export default defineNuxtPlugin({
  name: 'svc-auth',
  async setup() {
    const loaded = useState<boolean>('svc:auth:loaded', () => false)
    if (import.meta.client && loaded.value) return
    await useAuth().refresh()
    loaded.value = true
    if (import.meta.server && useAuthUser().value) {
      // HTML that holds a user must not be cached by anyone.
      useRequestEvent()?.node.res.setHeader('cache-control', 'no-store')
    }
  },
})
