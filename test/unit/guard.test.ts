import { describe, expect, it } from 'vitest'
import { decideRoute } from '../../shared/guard'
import type { AuthUser } from '../../shared/types'

const user: AuthUser = { id: 'u', name: 'U', email: 'u@x', roles: [], permissions: ['/orders/search', '/orders/create'] }
const page = (fullPath: string, meta = {}, redirectQuery?: unknown) => ({ path: fullPath.split('?')[0]!, fullPath, meta, redirectQuery })

describe('decideRoute (the route middleware)', () => {
  it('sends a visitor without session to the login page with the full original path', () => {
    expect(decideRoute(page('/orders?page=2&q=a b'), null)).toEqual({ action: 'login', to: '/auth/login?redirect=%2Forders%3Fpage%3D2%26q%3Da%20b' })
  })
  it('lets anyone open a page with auth: false, and the login page', () => {
    expect(decideRoute(page('/about', { auth: false }), null)).toEqual({ action: 'allow' })
    expect(decideRoute(page('/auth/login'), null)).toEqual({ action: 'allow' })
  })
  it('needs every declared permission', () => {
    expect(decideRoute(page('/orders', { permissions: ['/orders/search'] }), user)).toEqual({ action: 'allow' })
    expect(decideRoute(page('/orders/new', { permissions: ['/orders/search', '/orders/create'] }), user)).toEqual({ action: 'allow' })
    expect(decideRoute(page('/admin', { permissions: ['/admin/view'] }), user)).toEqual({ action: 'forbidden' })
    expect(decideRoute(page('/mixed', { permissions: ['/orders/search', '/admin/view'] }), user)).toEqual({ action: 'forbidden' })
    expect(decideRoute(page('/'), user)).toEqual({ action: 'allow' })
  })
  it('sends a signed-in user away from the login page to an internal redirect only', () => {
    expect(decideRoute(page('/auth/login', {}, '/orders?x=1'), user)).toEqual({ action: 'redirect', to: '/orders?x=1' })
    expect(decideRoute(page('/auth/login', {}, '//evil.com'), user)).toEqual({ action: 'redirect', to: '/' })
    expect(decideRoute(page('/auth/login', {}, ['/a', '/b']), user)).toEqual({ action: 'redirect', to: '/' })
  })
  it('sends a signed-in user without a redirect to the app\'s page after login, when that is internal', () => {
    expect(decideRoute(page('/auth/login'), user, '/orders')).toEqual({ action: 'redirect', to: '/orders' })
    expect(decideRoute(page('/auth/login', {}, '//evil.com'), user, '/orders')).toEqual({ action: 'redirect', to: '/orders' })
    expect(decideRoute(page('/auth/login', {}, '/about'), user, '/orders')).toEqual({ action: 'redirect', to: '/about' })
    expect(decideRoute(page('/auth/login'), user, 'https://evil.com')).toEqual({ action: 'redirect', to: '/' })
  })
})
