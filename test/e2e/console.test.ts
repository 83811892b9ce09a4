import type { ConsoleMessage, Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { logInThroughPage, useBrowserStack, waitForHydration } from '../support/browser'

const stack = useBrowserStack()
const url = (path: string) => stack.gateway.url + path

/**
 * Every error and warning the page's console gets (and uncaught page errors), as text. One is left out: Chromium's
 * own network line for a page whose status is an error, "Failed to load resource: … 403", which the contract's status
 * of that page (a 403 or 404 on a direct load) always brings; its source is the page's own address.
 */
function consoleProblems(page: Page): string[] {
  const problems: string[] = []
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() !== 'error' && message.type() !== 'warning') return
    const documentStatus = message.text().startsWith('Failed to load resource: the server responded with a status of ')
      && message.location().url === page.url()
    if (!documentStatus) problems.push(`${message.type()}: ${message.text()}`)
  })
  page.on('pageerror', error => problems.push(`pageerror: ${error.message}`))
  return problems
}

const logIn = (page: Page, username: string, password: string) => logInThroughPage(page, stack.gateway.url, username, password, '/auth/login', '/')

describe('a clean console', () => {
  it('on every page of the playground, a 403 and an unknown page loaded directly included', async () => {
    const page = await stack.context.newPage()
    const problems = consoleProblems(page)
    for (const path of ['/about', '/auth/login', '/orders']) {
      await page.goto(url(path))
      await page.waitForLoadState('networkidle')
    }
    await logIn(page, 'admin', 'admin123')
    for (const path of ['/', '/orders', '/orders/new', '/about', '/admin', '/no-such-page']) {
      await page.goto(url(path))
      await page.waitForLoadState('networkidle')
    }
    // Through the menu, as a user clicks (client navigation).
    await page.goto(url('/'))
    await waitForHydration(page)
    const menu = page.getByRole('navigation', { name: 'Điều hướng chính' })
    for (const name of ['Đơn hàng', 'Giới thiệu', 'Trang chủ']) {
      await menu.getByRole('link', { name }).click()
      await page.waitForLoadState('networkidle')
    }
    // A user without /orders/create loads its page directly (403), then logs out with the button.
    await page.getByRole('button', { name: 'Đăng xuất' }).click()
    await page.waitForURL(/\/auth\/login/)
    await logIn(page, 'viewer', 'viewer123')
    await page.goto(url('/orders/new'))
    await page.waitForLoadState('networkidle')
    // The 403 page has no menu: home, then out.
    await page.goto(url('/'))
    await waitForHydration(page)
    await page.getByRole('button', { name: 'Đăng xuất' }).click()
    await page.waitForURL(/\/auth\/login/)
    expect(problems).toEqual([])
  })

  it('on a page rendered in the browser alone (ssr: false, as in an SPA) that the user may not open: the 403 page, nothing logged', async () => {
    const page = await stack.context.newPage()
    const problems = consoleProblems(page)
    await logIn(page, 'admin', 'admin123')
    await page.goto(url('/reports'))
    await expect.poll(() => page.locator('h1').textContent()).toBe('Không có quyền truy cập')
    await page.waitForLoadState('networkidle')
    expect(await page.locator('.error-page__status').textContent()).toContain('403')
    expect(problems).toEqual([])
  })
})
