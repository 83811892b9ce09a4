import { mountSuspended, registerEndpoint } from '@nuxt/test-utils/runtime'
import { beforeEach, describe, expect, it } from 'vitest'
import { defineComponent, h, nextTick, withDirectives, resolveDirective } from 'vue'
import Can from '../../app/components/Can.vue'
import { useAuth } from '../../app/composables/useAuth'
import { AUTH_STATE_KEY, useAuthUser } from '../../app/lib/auth-state'
import { usePermission } from '../../app/composables/usePermission'
import { AppError } from '../../app/utils/app-error'
import type { AuthUser } from '../../shared/types'

const sale: AuthUser = { id: 'u-sale', name: 'Lê Bán Hàng', email: 's@x.vn', roles: ['sale'], permissions: ['/orders/search', '/orders/create'] }

beforeEach(() => {
  useAuthUser().value = null
})

describe('useAuth / usePermission', () => {
  it('reads the shared state svc:auth:user', () => {
    expect(AUTH_STATE_KEY).toBe('svc:auth:user')
    const { user, isAuthenticated } = useAuth()
    expect(isAuthenticated.value).toBe(false)
    useState(AUTH_STATE_KEY).value = sale
    expect(user.value).toEqual(sale)
    expect(isAuthenticated.value).toBe(true)
  })

  it('answers can / canAll / canAny / hasRole by exact match', () => {
    const { can, canAll, canAny, hasRole } = usePermission()
    expect(can('/orders/search')).toBe(false)
    useAuthUser().value = sale
    expect(can('/orders/search')).toBe(true)
    expect(can('/orders/search/')).toBe(false)
    expect(can('/orders')).toBe(false)
    expect(canAll(['/orders/search', '/orders/create'])).toBe(true)
    expect(canAll(['/orders/search', '/orders/delete'])).toBe(false)
    expect(canAny(['/orders/delete', '/orders/create'])).toBe(true)
    expect(canAny(['/orders/delete'])).toBe(false)
    expect(hasRole('sale')).toBe(true)
    expect(hasRole('admin')).toBe(false)
  })

  it('refresh() fills the state from GET /auth/session, and a failure counts as signed out', async () => {
    registerEndpoint('/auth/session', () => ({ user: sale }))
    expect(await useAuth().refresh()).toEqual(sale)
    expect(useAuthUser().value).toEqual(sale)
    registerEndpoint('/auth/session', () => {
      throw createError({ statusCode: 500 })
    })
    expect(await useAuth().refresh()).toBeNull()
  })

  it('login() throws an AppError with the route message', async () => {
    registerEndpoint('/auth/login', { method: 'POST', handler: () => {
      throw createError({ statusCode: 401, statusMessage: 'Unauthorized', data: undefined })
    } })
    await expect(useAuth().login({ username: 'a', password: 'b' })).rejects.toBeInstanceOf(AppError)
  })
})

describe('AppError', () => {
  it('takes status and message from the route body { statusCode, statusMessage }', async () => {
    registerEndpoint('/test/error', (event) => {
      event.node.res.statusCode = 401
      event.node.res.setHeader('content-type', 'application/json')
      return { statusCode: 401, statusMessage: 'Tên đăng nhập hoặc mật khẩu không đúng.' }
    })
    const failure = await $fetch('/test/error').catch((error: unknown) => AppError.from(error))
    expect(failure).toBeInstanceOf(AppError)
    expect(failure).toMatchObject({ status: 401, message: 'Tên đăng nhập hoặc mật khẩu không đúng.' })
  })

  it('turns a network failure into status 0 with a Vietnamese message', async () => {
    const failure = await $fetch('http://127.0.0.1:1/unreachable', { retry: 0 }).catch((error: unknown) => AppError.from(error))
    expect(failure).toMatchObject({ status: 0, message: 'Không kết nối được máy chủ. Vui lòng kiểm tra mạng và thử lại.' })
  })

  it('reads useAsyncData\'s error around what useApi threw: in the browser (its cause) and from the server render (the payload\'s NuxtError)', () => {
    const thrown = new AppError(500, 'apiProxyTarget chưa cấu hình.')
    expect(AppError.from(createError(thrown))).toBe(thrown)
    const fromPayload = createError({ statusCode: 500, message: 'apiProxyTarget chưa cấu hình.' })
    expect(AppError.from(fromPayload)).toMatchObject({ status: 500, message: 'apiProxyTarget chưa cấu hình.' })
    expect(AppError.from({ statusCode: 500, message: 'not a NuxtError' })).toMatchObject({ status: 0 })
  })

  it('reads a backend body { message } too', () => {
    expect(AppError.from({ response: {}, statusCode: 403, data: { message: 'Thiếu quyền /orders/delete.' } }))
      .toMatchObject({ status: 403, message: 'Thiếu quyền /orders/delete.' })
  })
})

describe('v-can', () => {
  const Buttons = defineComponent({
    setup() {
      return () => {
        const can = resolveDirective('can')!
        return h('div', [
          withDirectives(h('button', { id: 'create' }, 'Tạo'), [[can, '/orders/create']]),
          withDirectives(h('button', { id: 'delete', style: { display: 'inline-flex' } }, 'Xoá'), [[can, ['/orders/search', '/orders/delete']]]),
          withDirectives(h('button', { id: 'any' }, 'Bất kỳ'), [[can, ['/orders/delete', '/orders/search'], '', { any: true }]]),
          withDirectives(h('button', { id: 'lock' }, 'Khoá'), [[can, '/orders/delete', '', { disable: true }]]),
        ])
      }
    },
  })

  it('hides, shows and locks controls, and follows login and logout', async () => {
    const wrapper = await mountSuspended(Buttons)
    const el = (id: string) => wrapper.find(`#${id}`).element as HTMLButtonElement
    expect(el('create').style.display).toBe('none')
    expect(el('any').style.display).toBe('none')
    expect(el('lock').hasAttribute('disabled')).toBe(true)
    expect(el('lock').getAttribute('aria-disabled')).toBe('true')

    useAuthUser().value = sale
    await nextTick()
    expect(el('create').style.display).toBe('')
    expect(el('delete').style.display).toBe('none')
    expect(el('any').style.display).toBe('')
    expect(el('lock').hasAttribute('disabled')).toBe(true)

    useAuthUser().value = { ...sale, permissions: [...sale.permissions, '/orders/delete'] }
    await nextTick()
    expect(el('delete').style.display).toBe('inline-flex')
    expect(el('lock').hasAttribute('disabled')).toBe(false)
    expect(el('lock').hasAttribute('aria-disabled')).toBe(false)

    useAuthUser().value = null
    await nextTick()
    expect(el('create').style.display).toBe('none')
    expect(el('lock').hasAttribute('disabled')).toBe(true)
  })
})

describe('<Can>', () => {
  const render = (props: Record<string, unknown>) => mountSuspended(Can, {
    props,
    slots: { default: () => 'ALLOWED', fallback: () => 'DENIED' },
  })

  it.each([
    [{ permission: '/orders/search' }, 'ALLOWED'],
    [{ permission: '/orders/delete' }, 'DENIED'],
    [{ permission: ['/orders/search', '/orders/create'] }, 'ALLOWED'],
    [{ all: ['/orders/search', '/orders/delete'] }, 'DENIED'],
    [{ any: ['/orders/delete', '/orders/create'] }, 'ALLOWED'],
    [{ any: ['/orders/delete'] }, 'DENIED'],
    [{ role: 'sale' }, 'ALLOWED'],
    [{ role: 'admin' }, 'DENIED'],
    [{ permission: '/orders/search', role: 'admin' }, 'DENIED'],
  ])('%j renders %s for the sale user', async (props, expected) => {
    useAuthUser().value = sale
    expect((await render(props)).text()).toBe(expected)
  })

  it('renders the fallback when signed out, and follows login', async () => {
    const wrapper = await render({ permission: '/orders/search' })
    expect(wrapper.text()).toBe('DENIED')
    useAuthUser().value = sale
    await nextTick()
    expect(wrapper.text()).toBe('ALLOWED')
  })
})
