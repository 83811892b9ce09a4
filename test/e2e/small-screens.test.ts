import type { BrowserContext, Page } from 'playwright-core'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { axeViolations, saveScreenshot, useBrowserStack } from '../support/browser'
import type { RunningGateway } from '../support/gateway'

const stack = useBrowserStack()
// A gateway whose API target is not configured: its order page is the 500 page.
let broken: RunningGateway
beforeAll(async () => {
  broken = await stack.gatewayWith({ APP_AUTH_MOCK: 'true', APP_API_PROXY_TARGET: '' })
})
const contexts: BrowserContext[] = []
afterEach(async () => {
  await Promise.all(contexts.splice(0).map(context => context.close()))
})

/** A page of a new context of this width, colour scheme and language; signed in as admin at `base` when `signedIn`. */
async function pageOf(base: string, width: number, colorScheme: 'light' | 'dark', locale: string, signedIn: boolean): Promise<Page> {
  const context = await stack.browser.newContext({ viewport: { width, height: 800 }, colorScheme, locale })
  contexts.push(context)
  if (signedIn) expect((await context.request.post(`${base}/auth/login`, { data: { username: 'admin', password: 'admin123' } })).status()).toBe(200)
  return context.newPage()
}

/** What does not fit: horizontal overflow, and controls smaller than 24 × 24 CSS px (WCAG 2.5.8). */
async function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = []
    if (document.documentElement.scrollWidth > window.innerWidth) problems.push(`scrolls sideways: ${document.documentElement.scrollWidth} > ${window.innerWidth}`)
    for (const element of document.querySelectorAll<HTMLElement>('a[href], button, input:not([type=hidden]), select, textarea')) {
      const box = element.getBoundingClientRect()
      if (box.width === 0 && box.height === 0) continue
      // An inline link in a sentence is exempt (WCAG 2.5.8, inline).
      if (element.tagName === 'A' && getComputedStyle(element).display === 'inline') continue
      if (box.width < 24 || box.height < 24) problems.push(`${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''} "${(element.textContent ?? '').trim().slice(0, 20)}" is ${Math.round(box.width)} × ${Math.round(box.height)}`)
    }
    return problems
  })
}

const contrastViolations = (page: Page) => axeViolations(page, ['color-contrast'])

// 1280 px light is not among them: there accessibility.test.ts (these pages and the login's steps, in Vietnamese) and
// english.test.ts (the login, 403, 404 and 500 pages in English) run all of axe, contrast included, and a colour
// scheme changes no layout (1280 px dark checks it at that width).
describe.each([[360, 'light'], [360, 'dark'], [1280, 'dark']] as const)('at %i px, %s', (width, scheme) => {
  it.each([
    ['/auth/login', 'the login page', 'vi-VN', false],
    ['/auth/login', 'the login page in English (longer texts)', 'en-US', false],
    ['/orders', 'the orders page (header, table)', 'vi-VN', true],
    ['/admin', 'the 403 page', 'vi-VN', true],
    ['/no-such-page', 'the 404 page', 'vi-VN', true],
    ['/orders/1', 'the 500 page', 'vi-VN', true],
  ] as const)('%s (%s) fits, has targets of 24 px or more, and contrast to WCAG AA', async (path, _page, locale, signedIn) => {
    const base = path === '/orders/1' ? broken.url : stack.gateway.url
    const page = await pageOf(base, width, scheme, locale, signedIn)
    expect((await page.goto(base + path))?.status()).toBe(path === '/orders/1' ? 500 : path === '/admin' ? 403 : path === '/no-such-page' ? 404 : 200)
    await page.waitForLoadState('networkidle')
    await saveScreenshot(page, `${path.replaceAll('/', '_')}-${locale}-${width}-${scheme}`, { fullPage: true })
    expect(await layoutProblems(page)).toEqual([])
    expect(await contrastViolations(page)).toEqual([])
  })

  it.each([['vi-VN', 'Đăng nhập với mã OTP', 'Tin nhắn'], ['en-US', 'Sign in with a one-time code', 'Text message']] as const)(
    'the login page at its messenger OTP step (%s) fits, has targets of 24 px or more, and contrast to WCAG AA', async (locale, useOtp, messenger) => {
      const page = await pageOf(stack.gateway.url, width, scheme, locale, false)
      await page.goto(`${stack.gateway.url}/auth/login`)
      await page.locator('button[type=submit]:not([disabled])').waitFor()
      await page.getByLabel(useOtp).check()
      await page.getByLabel(messenger).check()
      await page.locator('#login-otp-code').waitFor()
      await saveScreenshot(page, `_auth_login-otp-${locale}-${width}-${scheme}`, { fullPage: true })
      expect(await layoutProblems(page)).toEqual([])
      expect(await contrastViolations(page)).toEqual([])
    })
})
