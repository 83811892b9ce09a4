import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { RouteLocationNormalized } from 'vue-router'
import routeGuard from '../../app/lib/route-guard'
import { useAuthUser } from '../../app/lib/auth-state'
import { vi } from '../../shared/messages'
import type { AuthUser } from '../../shared/types'

const viewer: AuthUser = { id: 'u-viewer', name: 'Phạm Chỉ Xem', email: 'v@x.vn', roles: ['viewer'], permissions: ['/orders/search'] }

/** A route the guard is asked about: the admin page, which needs /admin/view. */
const adminPage = { path: '/admin', fullPath: '/admin', query: {}, meta: { permissions: ['/admin/view'] } } as unknown as RouteLocationNormalized
const home = { path: '/', fullPath: '/', query: {}, meta: {} } as unknown as RouteLocationNormalized

describe('the route guard, for a page the user may not open', () => {
  let nuxtApp: ReturnType<typeof useNuxtApp>
  let started: { isHydrating?: boolean, serverRendered?: boolean }
  const appErrors: unknown[] = []
  let stopListening: () => void
  beforeEach(() => {
    nuxtApp = useNuxtApp()
    started = { isHydrating: nuxtApp.isHydrating, serverRendered: nuxtApp.payload.serverRendered }
    useAuthUser().value = viewer
    appErrors.length = 0
    stopListening = nuxtApp.hook('app:error', error => void appErrors.push(error))
    // abortNavigation() belongs inside a route middleware.
    nuxtApp._processingMiddleware = true
  })
  afterEach(async () => {
    stopListening()
    Object.assign(nuxtApp, { isHydrating: started.isHydrating, _processingMiddleware: undefined })
    nuxtApp.payload.serverRendered = started.serverRendered
    await clearError()
  })

  it('on the first page of an app rendered in the browser (ssr: false): the 403 page, no app:error (Nuxt logs those as [NUXT_E1005])', async () => {
    nuxtApp.isHydrating = true
    nuxtApp.payload.serverRendered = false
    const result = await nuxtApp.runWithContext(() => routeGuard(adminPage, home))
    expect(result).toBeUndefined()
    expect(useError().value).toMatchObject({ statusCode: 403, message: vi.errors.forbiddenPage })
    expect(appErrors).toEqual([])
  })

  it('on a later navigation in the browser: a fatal 403, the error page in place of the app', async () => {
    const thrown = await (async () => nuxtApp.runWithContext(() => routeGuard(adminPage, home)))().catch((error: unknown) => error)
    expect(thrown).toMatchObject({ statusCode: 403, fatal: true, message: vi.errors.forbiddenPage })
    expect(useError().value).toMatchObject({ statusCode: 403 })
  })
})
