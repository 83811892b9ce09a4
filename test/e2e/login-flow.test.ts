import type { Page } from 'playwright-core'
import { beforeEach, describe, expect, it } from 'vitest'
import { AUTHENTICATOR_OTP, MESSENGER_OTP, USERS } from '../../dev/iam.mjs'
import { saveScreenshot, useBrowserStack, waitForHydration } from '../support/browser'

const stack = useBrowserStack()
let page: Page
beforeEach(async () => {
  page = await stack.context.newPage()
})

const url = (path: string) => stack.gateway.url + path

/** Whether a URL is the login page with the given `redirect` (however the router encoded it). */
function isLoginWith(redirect: string) {
  return (target: URL) => target.pathname === '/auth/login' && target.searchParams.get('redirect') === redirect
}

/** Fills the login form once it is hydrated (the button is disabled before). */
async function fillLogin(username: string, password: string) {
  await page.locator('button[type=submit]:not([disabled])').waitFor()
  await page.getByLabel('Tên đăng nhập').fill(username)
  await page.getByLabel('Mật khẩu').fill(password)
}

async function loginAs(username: string, password: string, path = '/') {
  await page.goto(url(path))
  await fillLogin(username, password)
  await page.getByRole('button', { name: 'Đăng nhập', exact: true }).click()
  await page.waitForURL(url(path))
  // The page after a login is loaded whole: its buttons answer once it is hydrated.
  await waitForHydration(page)
}

describe('the login flow of the contract', () => {
  it('protected page -> login page with redirect -> log in -> back on the page with data from the backend', async () => {
    await page.goto(url('/orders?q=c'))
    expect(isLoginWith('/orders?q=c')(new URL(page.url()))).toBe(true)
    await page.locator('button[type=submit]:not([disabled])').waitFor()
    await saveScreenshot(page, 'login')
    // The app's name and logo from its app config (svcAuth.productName, svcAuth.logoUrl).
    expect(await page.getByTestId('login-product').textContent()).toBe('Quản lý đơn hàng')
    const logo = page.getByTestId('login-logo')
    expect(await logo.getAttribute('src')).toBe('/logo.svg')
    expect(await logo.evaluate(image => (image as HTMLImageElement).naturalWidth)).toBe(48)
    await fillLogin('sale', 'sale123')
    await page.getByRole('button', { name: 'Đăng nhập', exact: true }).click()
    await page.waitForURL(url('/orders?q=c'))
    await expect.poll(() => page.getByTestId('orders-table').textContent()).toContain('Công ty TNHH Minh Phát')
    await expect.poll(() => page.getByTestId('user-name').textContent()).toBe(USERS.sale.fullName)
    await saveScreenshot(page, 'orders')

    // A full reload keeps the session, and the first HTML already knows the user (no flash of the login page).
    const response = await page.reload()
    expect(response!.status()).toBe(200)
    expect(page.url()).toBe(url('/orders?q=c'))
    const html = await response!.text()
    expect(html).toContain(USERS.sale.fullName)
    expect(html).not.toContain('Tên đăng nhập')
    // The list came from the backend during the server render (useApi inside useAsyncData, cookie forwarded).
    expect(html).toContain('Công ty TNHH Minh Phát')
    expect(response!.headers()['cache-control']).toBe('no-store')
  })

  it('keeps the token out of document.cookie, the page source and the SSR payload', async () => {
    await loginAs('admin', 'admin123')
    const token = stack.iam.requests.filter(r => r.path === '/iam/user/userInfo').at(-1)!.headers.authorization as string
    expect(token.length).toBeGreaterThan(2000)
    expect(await page.evaluate(() => document.cookie)).not.toContain('svc_session')
    const cookies = await stack.context.cookies()
    const session = cookies.find(cookie => cookie.name === 'svc_session')!
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: true, path: '/' })
    for (const path of ['/', '/orders']) {
      const html = await (await page.goto(url(path)))!.text()
      expect(html).not.toContain(token)
      expect(html).not.toContain(token.slice(4, 64))
      expect(await page.content()).not.toContain(token.slice(4, 64))
    }
    // The SSR payload is in the page source checked above: it holds the user state, not the token.
    const payload = await page.locator('#__NUXT_DATA__').textContent()
    expect(payload).toContain('svc:auth:user')
    expect(payload).not.toContain(token.slice(4, 64))
  })

  it('shows the IAM message for a wrong password and focuses it', async () => {
    await page.goto(url('/auth/login'))
    await fillLogin('sale', 'wrong')
    await page.getByRole('button', { name: 'Đăng nhập', exact: true }).click()
    const alert = page.getByRole('alert')
    await expect.poll(() => alert.textContent()).toContain('Tên đăng nhập hoặc mật khẩu không đúng.')
    expect(await alert.evaluate(el => el === document.activeElement)).toBe(true)
    expect(page.url()).toBe(url('/auth/login'))
  })

  it('sends the chosen application to the IAM as clientId', async () => {
    await page.goto(url('/auth/login'))
    await fillLogin('sale', 'sale123')
    await page.getByLabel('Ứng dụng', { exact: true }).selectOption('CRM_WEB')
    await page.getByRole('button', { name: 'Đăng nhập', exact: true }).click()
    await page.waitForURL(url('/'))
    expect(stack.iam.requests.filter(r => r.path === '/auth/auth/login-v1').at(-1)!.body).toMatchObject({ username: 'sale', clientId: 'CRM_WEB' })
  })

  it('shows no application dropdown when the list is empty', async () => {
    const noClients = await stack.gatewayWith({ APP_AUTH_ENDPOINTS_CLIENTS: '' })
    try {
      await page.goto(`${noClients.url}/auth/login`)
      await page.locator('button[type=submit]:not([disabled])').waitFor()
      expect(await page.getByLabel('Tên đăng nhập').count()).toBe(1)
      expect(await page.locator('select').count()).toBe(0)
      expect(await page.getByText('Ứng dụng', { exact: true }).count()).toBe(0)
    }
    finally {
      await noClients.stop()
    }
  })

  it('shows the network failure message when the gateway cannot be reached', async () => {
    await page.goto(url('/auth/login'))
    await fillLogin('sale', 'sale123')
    await page.route('**/auth/login', route => (route.request().method() === 'POST' ? route.abort('connectionrefused') : route.continue()))
    await page.getByRole('button', { name: 'Đăng nhập', exact: true }).click()
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Không kết nối được máy chủ. Vui lòng kiểm tra mạng và thử lại.')
    expect(page.url()).toBe(url('/auth/login'))
  })

  it('focuses the first empty field instead of sending', async () => {
    const before = stack.iam.requests.length
    await page.goto(url('/auth/login'))
    await page.locator('button[type=submit]:not([disabled])').waitFor()
    await page.getByLabel('Mật khẩu').fill('x')
    await page.getByRole('button', { name: 'Đăng nhập', exact: true }).click()
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('login-username')
    expect(await page.getByText('Vui lòng nhập tên đăng nhập.').isVisible()).toBe(true)
    expect(stack.iam.requests.slice(before).some(r => r.path === '/auth/auth/login-v1')).toBe(false)
  })

  it('OTP by messenger: send the code, keep the transactionId, log in', async () => {
    await page.goto(url('/auth/login'))
    await fillLogin('otp.sms', 'otp123')
    await page.getByLabel('Đăng nhập với mã OTP').check()
    await page.getByLabel('Tin nhắn').check()
    await page.getByRole('button', { name: 'Gửi mã' }).click()
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Đã gửi mã OTP')
    await page.getByLabel('Mã OTP', { exact: true }).fill(MESSENGER_OTP)
    await page.getByRole('button', { name: 'Đăng nhập', exact: true }).click()
    await page.waitForURL(url('/'))
    await expect.poll(() => page.getByTestId('user-name').textContent()).toBe(USERS['otp.sms'].fullName)
    const call = stack.iam.requests.filter(r => r.path === '/auth/auth/login-v1').at(-1)!
    expect(call.body).toMatchObject({ authenMethod: 'MESSENGER', otp: MESSENGER_OTP })
    expect(call.body.transactionId).toMatch(/^tx-/)
  })

  it('OTP by authenticator: the code goes straight to login', async () => {
    await page.goto(url('/auth/login'))
    await fillLogin('otp.app', 'otp123')
    await page.getByRole('button', { name: 'Đăng nhập', exact: true }).click()
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Vui lòng nhập mã OTP từ ứng dụng xác thực.')
    await page.getByLabel('Đăng nhập với mã OTP').check()
    expect(await page.getByRole('button', { name: 'Gửi mã' }).count()).toBe(0)
    await page.getByLabel('Mã OTP', { exact: true }).fill(AUTHENTICATOR_OTP)
    await page.getByRole('button', { name: 'Đăng nhập', exact: true }).click()
    await page.waitForURL(url('/'))
    expect(stack.iam.requests.filter(r => r.path === '/auth/auth/login-v1').at(-1)!.body).toMatchObject({ authenMethod: 'AUTHENTICATOR', otp: AUTHENTICATOR_OTP })
  })
})

describe('gating', () => {
  it('shows the 403 page (status 403 on a server render, and after client navigation)', async () => {
    await loginAs('sale', 'sale123')
    const response = await page.goto(url('/admin'))
    expect(response!.status()).toBe(403)
    await expect.poll(() => page.locator('main').textContent()).toContain('Bạn không có quyền truy cập trang này.')
    await saveScreenshot(page, 'forbidden')

    // The menu shows only what the user may open: no 'Quản trị' link for her. A client navigation there (the app's
    // router, as a link elsewhere would do) still meets the 403.
    await page.goto(url('/'))
    const menu = page.getByRole('navigation', { name: 'Điều hướng chính' })
    await menu.getByRole('link', { name: 'Đơn hàng' }).waitFor()
    expect(await menu.getByRole('link', { name: 'Quản trị' }).isVisible()).toBe(false)
    // The server's HTML has the menu before the app hydrates: the router exists once Vue has mounted.
    await page.waitForFunction(() => (document.querySelector('#__nuxt') as unknown as { __vue_app__?: unknown } | null)?.__vue_app__ !== undefined)
    await page.evaluate(() => (document.querySelector('#__nuxt') as unknown as { __vue_app__: { config: { globalProperties: { $router: { push: (to: string) => Promise<void> } } } } }).__vue_app__.config.globalProperties.$router.push('/admin').catch(() => {
      // The guard ends the navigation with the 403 error it shows.
    }))
    await expect.poll(() => page.locator('body').textContent()).toContain('Bạn không có quyền truy cập trang này.')
  })

  it('hides and disables controls by permission: viewer, sale, admin', async () => {
    const controls = async () => ({
      create: await page.getByTestId('create-order').isVisible(),
      deleteDisabled: await page.getByTestId('delete-order').first().isDisabled(),
      deleteAria: await page.getByTestId('delete-order').first().getAttribute('aria-disabled'),
      complete: await page.getByRole('button', { name: 'Hoàn tất' }).count(),
    })
    await loginAs('viewer', 'viewer123', '/orders')
    await page.getByTestId('orders-table').waitFor()
    expect(await controls()).toEqual({ create: false, deleteDisabled: true, deleteAria: 'true', complete: 0 })
    // Hidden on the server render too: the HTML already has display:none.
    const html = await (await stack.context.request.get(url('/orders'))).text()
    expect(html).toMatch(/<a[^>]*style="display:none;?"[^>]*data-testid="create-order"|data-testid="create-order"[^>]*style="display:none/)

    await page.getByRole('button', { name: 'Đăng xuất' }).click()
    await page.waitForURL(/\/auth\/login/)
    await loginAs('admin', 'admin123', '/orders')
    await page.getByTestId('orders-table').waitFor()
    expect(await controls()).toEqual({ create: true, deleteDisabled: false, deleteAria: null, complete: 5 })
  })

  it('creates an order through the proxy, after client navigation', async () => {
    await loginAs('sale', 'sale123', '/orders')
    await page.getByTestId('create-order').click()
    await page.waitForURL(url('/orders/new'))
    await page.getByLabel('Khách hàng').fill('Công ty Thử Nghiệm')
    await page.getByLabel('Tổng tiền (VND)').fill('990000')
    await page.getByRole('button', { name: 'Lưu đơn' }).click()
    await page.waitForURL(url('/orders'))
    await expect.poll(() => page.getByTestId('orders-table').textContent()).toContain('Công ty Thử Nghiệm')
  })

  it('goes to the login page when an /api call answers 401 because the session is over', async () => {
    await loginAs('viewer', 'viewer123', '/')
    stack.iam.revokeAll()
    await page.getByRole('link', { name: 'Đơn hàng', exact: true }).click()
    await page.waitForURL(isLoginWith('/orders'))
  })

  it('opens a public page without a session', async () => {
    const response = await page.goto(url('/about'))
    expect(response!.status()).toBe(200)
    expect(page.url()).toBe(url('/about'))
  })
})

describe('logout and hostile redirects', () => {
  it('logs out through GET /auth/logout and removes the cookie', async () => {
    await loginAs('sale', 'sale123')
    await page.getByRole('button', { name: 'Đăng xuất' }).click()
    await page.waitForURL(isLoginWith('/'))
    expect((await stack.context.cookies()).some(cookie => cookie.name === 'svc_session')).toBe(false)
    expect(await (await stack.context.request.get(url('/auth/session'))).json()).toEqual({ user: null, expiresAt: null })
  })

  it.each([
    ['//evil.example/x', '/'], ['https://evil.example', '/'], ['/\\evil.example', '/'], ['javascript:alert(1)', '/'],
    ['/.//evil.example', '/'], ['/%2e%2e//evil.example', '/'],
    // An escaped tab is no tab: an internal path (of this origin) that the page keeps.
    ['/%09/evil.example', '/%09/evil.example'],
  ])(
    'stays on our origin with redirect=%j on the login page and on logout', async (redirect, landing) => {
      await page.goto(url(`/auth/login?redirect=${encodeURIComponent(redirect)}`))
      await fillLogin('viewer', 'viewer123')
      await page.getByRole('button', { name: 'Đăng nhập', exact: true }).click()
      await page.waitForLoadState('networkidle')
      // Exactly there: never the hostile target, on any origin.
      await expect.poll(() => page.url()).toBe(url(landing))

      await page.goto(url(`/auth/logout?redirect=${encodeURIComponent(redirect)}`))
      // Logged out: a protected landing page sends on to the login page, still on our origin.
      const after = new URL(page.url())
      expect(after.origin).toBe(stack.gateway.url)
      expect(after.pathname === landing || (after.pathname === '/auth/login' && after.searchParams.get('redirect') === landing)).toBe(true)
    })

  it.each(['/.//evil.example', '/..//evil.example', '/x/..//evil.example', '/%2e%2e//evil.example'])('keeps a signed-in user sent to /auth/login?redirect=%s on our origin, at home', async (redirect) => {
    await loginAs('viewer', 'viewer123')
    const leaving: string[] = []
    page.on('request', (request) => {
      if (!request.url().startsWith(stack.gateway.url)) leaving.push(request.url())
    })
    await page.goto(url(`/auth/login?redirect=${encodeURIComponent(redirect)}`))
    await page.waitForLoadState('networkidle')
    expect(page.url()).toBe(url('/'))
    expect(leaving).toEqual([])
  })

  it('sends a signed-in user who opens the login page on to the internal redirect', async () => {
    await loginAs('viewer', 'viewer123')
    await page.goto(url('/auth/login?redirect=%2Forders'))
    await page.waitForURL(url('/orders'))
  })
})
