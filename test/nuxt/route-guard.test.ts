import { registerEndpoint } from '@nuxt/test-utils/runtime'
import { afterEach, beforeEach, describe, expect, it, vi as vitest } from 'vitest'
import type { RouteLocationNormalized } from 'vue-router'
import routeGuard from '../../app/lib/route-guard'
import { useAuth } from '../../app/composables/useAuth'
import { useAuthUser } from '../../app/lib/auth-state'
import { AppError } from '../../app/utils/app-error'
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

describe('useAuth().login() whose session the browser did not keep', () => {
  afterEach(() => {
    vitest.unstubAllGlobals()
  })

  it('over plain http to a host that is not the browser\'s own machine: an AppError that says why', async () => {
    registerEndpoint('/auth/login', { method: 'POST', handler: () => ({ user: viewer }) })
    registerEndpoint('/auth/session', () => ({ user: null, expiresAt: null }))
    vitest.stubGlobal('location', { protocol: 'http:', host: 'staging.example:8080' })
    const failure = await useAuth().login({ username: 'viewer', password: 'viewer123' }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(AppError)
    expect(failure).toMatchObject({ status: 0, message: vi.errors.plainHttp })
    expect(useAuthUser().value).toBeNull()
  })

  it('on the browser\'s own machine: the login\'s user, as before (the cookie was kept; the session is read again later)', async () => {
    registerEndpoint('/auth/login', { method: 'POST', handler: () => ({ user: viewer }) })
    registerEndpoint('/auth/session', () => ({ user: null, expiresAt: null }))
    vitest.stubGlobal('location', { protocol: 'http:', host: 'localhost:3000' })
    expect(await useAuth().login({ username: 'viewer', password: 'viewer123' })).toEqual(viewer)
  })
})
