import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { AUTHENTICATOR_OTP } from '../../dev/iam.mjs'
import { logoutConfirmationHtml } from '../../server/core/http/logout-page'
import { axeViolations, useBrowserStack } from '../support/browser'

// The login page's 429 needs a low limit; nothing else here depends on it.
const stack = useBrowserStack({ gateway: { APP_RATE_LIMIT_PER_USER: '2' } })
const url = (path: string) => stack.gateway.url + path
const violations = (page: Page) => axeViolations(page)

async function openLogin(page: Page, username = '', password = '') {
  await page.goto(url('/auth/login'))
  await page.locator('button[type=submit]:not([disabled])').waitFor()
  if (username) await page.getByLabel('Tên đăng nhập').fill(username)
  if (password) await page.getByLabel('Mật khẩu').fill(password)
}

const submit = (page: Page) => page.getByRole('button', { name: 'Đăng nhập', exact: true }).click()

describe('accessibility: axe-core finds no violation of any impact', () => {
  it('on the login page, step by step: credentials, an error, OTP by authenticator, OTP by messenger, locked out (429)', async () => {
    const page = await stack.context.newPage()
    const found: Record<string, string[]> = {}
    await openLogin(page)
    found.credentials = await violations(page)

    await openLogin(page, 'sale', 'wrong')
    await submit(page)
    await page.getByRole('alert').waitFor()
    found.error = await violations(page)

    await openLogin(page, 'otp.app', 'otp123')
    await submit(page)
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Vui lòng nhập mã OTP')
    await page.getByLabel('Đăng nhập với mã OTP').check()
    await page.getByLabel('Mã OTP', { exact: true }).fill(AUTHENTICATOR_OTP.slice(0, 3))
    found.authenticator = await violations(page)

    await openLogin(page, 'otp.sms', 'otp123')
    await page.getByLabel('Đăng nhập với mã OTP').check()
    await page.getByLabel('Tin nhắn').check()
    await page.getByRole('button', { name: 'Gửi mã' }).click()
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Đã gửi mã OTP')
    found.messenger = await violations(page)

    for (let attempt = 0; attempt < 3; attempt++) {
      await openLogin(page, 'viewer', 'wrong')
      await submit(page)
      await page.getByRole('alert').waitFor()
    }
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Bạn đã thử quá nhiều lần')
    found.lockedOut = await violations(page)

    expect(found).toEqual({ credentials: [], error: [], authenticator: [], messenger: [], lockedOut: [] })
  })

  it('lets a keyboard alone log in with OTP: Tab, typing, Space and Enter', async () => {
    const page = await stack.context.newPage()
    await page.goto(url('/auth/login?redirect=%2Fabout'))
    await page.locator('button[type=submit]:not([disabled])').waitFor()
    const focused = () => page.evaluate(() => document.activeElement?.id ?? '')
    /** Tabs on until the element with this id has the focus (at most 10 presses). */
    const tabTo = async (id: string) => {
      for (let press = 0; press < 10 && await focused() !== id; press++) await page.keyboard.press('Tab')
      expect(await focused()).toBe(id)
    }
    await tabTo('login-username')
    await page.keyboard.type('otp.app')
    await tabTo('login-password')
    await page.keyboard.type('otp123')
    await tabTo('login-use-otp')
    await page.keyboard.press('Space')
    await tabTo('login-otp-code')
    await page.keyboard.type(AUTHENTICATOR_OTP)
    await page.keyboard.press('Enter')
    await page.waitForURL(url('/about'))
  })

  it('says why the login button waits while the page loads (its server render, before the scripts run)', async () => {
    const html = await (await stack.context.request.get(url('/auth/login'))).text()
    expect(html).toMatch(/<button[^>]*type="submit"[^>]*disabled[^>]*aria-describedby="login-loading"|<button[^>]*aria-describedby="login-loading"[^>]*disabled/)
    expect(html).toContain('id="login-loading"')
    expect(html).toContain('Trang đang tải, vui lòng chờ giây lát.')
  })

  it('on the logout confirmation page (as the gateway sends it to a browser another site sent there)', async () => {
    const page = await stack.context.newPage()
    await page.goto(url('/about'))
    await page.setContent(logoutConfirmationHtml('/auth/logout?redirect=%2F'))
    expect(await violations(page)).toEqual([])
  })

  it('on every playground page signed in, the 403 and the 404 pages', async () => {
    const page = await stack.context.newPage()
    await openLogin(page, 'admin', 'admin123')
    await submit(page)
    await page.waitForURL(url('/'))
    const found: Record<string, string[]> = {}
    for (const path of ['/', '/orders', '/orders/1', '/orders/new', '/about', '/admin', '/secure-report', '/no-such-page']) {
      await page.goto(url(path))
      await page.waitForLoadState('networkidle')
      found[path] = await violations(page)
    }
    expect(found).toEqual({ '/': [], '/orders': [], '/orders/1': [], '/orders/new': [], '/about': [], '/admin': [], '/secure-report': [], '/no-such-page': [] })
  })

  it('on the 500 page (an order page whose API target is not configured)', async () => {
    const gateway = await stack.gatewayWith({ APP_AUTH_MOCK: 'true', APP_API_PROXY_TARGET: '' })
    const page = await stack.context.newPage()
    await page.goto(`${gateway.url}/auth/login?redirect=%2Forders%2F1`)
    await page.locator('button[type=submit]:not([disabled])').waitFor()
    await page.getByLabel('Tên đăng nhập').fill('admin')
    await page.getByLabel('Mật khẩu').fill('anything')
    await submit(page)
    await page.waitForURL(`${gateway.url}/orders/1`)
    expect((await page.reload())?.status()).toBe(500)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Đã có lỗi xảy ra')
    expect(await page.locator('.error-page__message').textContent()).toContain('apiProxyTarget chưa cấu hình.')
    expect(await violations(page)).toEqual([])
  })
})
