import { setTimeout as sleep } from 'node:timers/promises'
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { USERS } from '../../dev/iam.mjs'
import { logInThroughPage, saveScreenshot, useBrowserStack } from '../support/browser'

const stack = useBrowserStack()

const url = (path: string) => stack.gateway.url + path

const logIn = (page: Page, username: string, password: string, path = '/') => logInThroughPage(page, stack.gateway.url, username, password, path)

/** What the session-expiry banner showed when it appeared. */
interface ShownBanner { text: string, links: Array<{ name?: string, href: string | null }> }

const isLoginWith = (redirect: string) => (target: URL) => target.pathname === '/auth/login' && target.searchParams.get('redirect') === redirect

describe('tabs of one browser stay in step', () => {
  it('a logout in one tab reaches the other within 2 s, which goes to the login page with its path as redirect', async () => {
    const first = await stack.context.newPage()
    await logIn(first, 'sale', 'sale123', '/orders')
    const second = await stack.context.newPage()
    await second.goto(url('/about'))
    await expect.poll(() => second.getByTestId('user-name').textContent()).toBe(USERS.sale.fullName)
    await first.getByRole('button', { name: 'Đăng xuất' }).click()
    // The other tab hears of it (its user is gone) within 2 s of the click, the poll's own bound (the click itself, its
    // checks and the logout's round trip, is not counted: on a busy machine it took over a second); loading the login
    // page there may take longer than the news itself.
    await expect.poll(() => second.getByTestId('user-name').count(), { timeout: 2_000, interval: 50 }).toBe(0)
    await second.waitForURL(isLoginWith('/about'), { timeout: 5_000 })
    // No reload loop: it stays on the login page.
    await second.waitForTimeout(1_000)
    expect(isLoginWith('/about')(new URL(second.url()))).toBe(true)
  })

  it('a logout by a typed /auth/logout in one tab sends the other to the login page, with no reload loop', async () => {
    const first = await stack.context.newPage()
    await logIn(first, 'sale', 'sale123', '/orders')
    const second = await stack.context.newPage()
    // A plain navigation: no script of the app says anything before the page goes.
    await second.goto(url('/auth/logout?redirect=%2Fabout'))
    await second.waitForURL(url('/about'))
    await first.waitForURL(isLoginWith('/orders'), { timeout: 5_000 })
    expect(await first.getByTestId('user-name').count()).toBe(0)
    // Both stay where they are: the login page and the public page announce 'gone' and nobody moves again.
    await first.waitForTimeout(1_000)
    expect(isLoginWith('/orders')(new URL(first.url()))).toBe(true)
    expect(new URL(second.url()).pathname).toBe('/about')
  })

  it('a tab that starts without a session leaves the signed-in tabs alone while the session lives', async () => {
    const first = await stack.context.newPage()
    await logIn(first, 'viewer', 'viewer123', '/orders')
    // Another browser context (no cookie) is another browser: its announcement does not reach this one. In this one,
    // a tab that starts signed in announces nothing; the first tab stays.
    const second = await stack.context.newPage()
    await second.goto(url('/about'))
    await expect.poll(() => second.getByTestId('user-name').textContent()).toBe(USERS.viewer.fullName)
    await first.waitForTimeout(500)
    expect(new URL(first.url()).pathname).toBe('/orders')
  })

  it('a login in one tab shows the user in the other', async () => {
    const first = await stack.context.newPage()
    await first.goto(url('/orders'))
    expect(isLoginWith('/orders')(new URL(first.url()))).toBe(true)
    await first.locator('button[type=submit]:not([disabled])').waitFor()
    const second = await stack.context.newPage()
    await logIn(second, 'viewer', 'viewer123', '/')
    // The first tab, on the login page, moves on to its redirect with the user shown.
    await first.waitForURL(url('/orders'), { timeout: 2_000 })
    await expect.poll(() => first.getByTestId('user-name').textContent(), { timeout: 2_000 }).toBe(USERS.viewer.fullName)
  })
})

describe('a session about to end', () => {
  it('shows the banner for a short-lived session, then sends the tab to the login page when it ends', async () => {
    const page = await stack.context.newPage()
    // The page reports the banner's text and link itself, the moment it shows: the session lasts 2 s, and on a loaded
    // machine the tab moved on to the login page between Playwright's separate steps (CI: between two reads, then
    // between the wait for the banner and one read). A binding outlives the navigations.
    let report: (shown: ShownBanner) => void = () => {}
    const reported = new Promise<ShownBanner>((resolve) => {
      report = resolve
    })
    await page.exposeFunction('reportSessionExpiry', (shown: ShownBanner) => report(shown))
    await page.addInitScript(() => {
      new MutationObserver((_, observer) => {
        const banner = document.querySelector('[data-testid="session-expiry"]')
        if (!banner) return
        observer.disconnect()
        const links = [...banner.querySelectorAll('a')].map(link => ({ name: link.textContent?.trim(), href: link.getAttribute('href') }))
        void (window as unknown as { reportSessionExpiry: (shown: ShownBanner) => Promise<void> }).reportSessionExpiry({ text: banner.textContent ?? '', links })
      }).observe(document, { childList: true, subtree: true })
    })
    await logIn(page, 'short-lived', 'short123', '/')
    const none = sleep<ShownBanner>(5_000, { text: 'no banner within 5 s of the login', links: [] })
    const shown = await Promise.race([reported, none])
    expect(shown.text).toContain('Phiên đăng nhập sẽ hết hạn')
    expect(shown.links).toEqual([{ name: 'Đăng nhập lại', href: '/auth/logout?redirect=%2Fauth%2Flogin%3Fredirect%3D%252F' }])
    await saveScreenshot(page, 'session-expiry')
    await page.waitForURL(isLoginWith('/'), { timeout: 5_000 })
  })
})
