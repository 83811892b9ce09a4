import { mountSuspended } from '@nuxt/test-utils/runtime'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { defineComponent, h } from 'vue'
import ErrorPage from '../../app/error.vue'
import { useAuthUser } from '../../app/lib/auth-state'
import { FORBIDDEN_MESSAGE } from '../../shared/guard'
import type { AuthUser } from '../../shared/types'

const viewer: AuthUser = { id: 'u-viewer', name: 'Phạm Chỉ Xem', email: 'v@x.vn', roles: ['viewer'], permissions: ['/orders/search'] }

/** The page a test puts at `/`. */
const Home = defineComponent({ render: () => h('p', 'home') })

describe('the error page\'s home button', () => {
  afterEach(async () => {
    await clearError()
    useAuthUser().value = null
  })

  it('asks the route guard again when the page refused is home itself: the 403 stays', async () => {
    const router = useRouter()
    // An app whose home needs a permission the user lacks, its 403 shown on `/` (as a server render leaves it, or a
    // session whose permissions changed).
    router.addRoute({ name: 'index', path: '/', meta: { permissions: ['/dashboard/view'] }, component: Home })
    useAuthUser().value = { ...viewer, permissions: ['/dashboard/view'] }
    await router.replace('/')
    useAuthUser().value = viewer
    showError(createError({ statusCode: 403, statusMessage: 'Forbidden', message: FORBIDDEN_MESSAGE, data: { message: FORBIDDEN_MESSAGE } }))
    const page = await mountSuspended(ErrorPage, { props: { error: useError().value! } })
    await page.get('button').trigger('click')
    // The guard's answer: the 403 again (a plain clearError({ redirect: '/' }) ran no guard and cleared it).
    await new Promise(resolve => setTimeout(resolve, 100))
    expect(router.currentRoute.value.path).toBe('/')
    expect(useError().value).toMatchObject({ statusCode: 403, message: FORBIDDEN_MESSAGE })
  })

  it('opens home and clears the error when the guard lets the user in', async () => {
    const router = useRouter()
    router.addRoute({ name: 'index', path: '/', meta: {}, component: Home })
    useAuthUser().value = viewer
    await router.replace('/admin').catch(() => undefined)
    expect(useError().value).toMatchObject({ statusCode: 403 })
    const page = await mountSuspended(ErrorPage, { props: { error: useError().value! } })
    await page.get('button').trigger('click')
    await vi.waitFor(() => expect(router.currentRoute.value.path).toBe('/'))
    await vi.waitFor(() => expect(useError().value).toBeUndefined())
  })
})
