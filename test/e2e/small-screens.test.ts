import type { BrowserContext, Page } from 'playwright-core'
import { afterEach, describe, expect, it } from 'vitest'
import { axeViolations, SCREENSHOTS, useBrowserStack } from '../support/browser'

const stack = useBrowserStack()
const url = (path: string) => stack.gateway.url + path
const contexts: BrowserContext[] = []
afterEach(async () => {
  await Promise.all(contexts.splice(0).map(context => context.close()))
})

/** A page of a new context of this width and colour scheme; signed in as admin when `signedIn`. */
async function pageOf(width: number, colorScheme: 'light' | 'dark', signedIn: boolean): Promise<Page> {
  const context = await stack.browser.newContext({ viewport: { width, height: 800 }, colorScheme, locale: 'vi-VN' })
  contexts.push(context)
  if (signedIn) expect((await context.request.post(url('/auth/login'), { data: { username: 'admin', password: 'admin123' } })).status()).toBe(200)
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

describe.each([[360, 'light'], [360, 'dark'], [1280, 'light'], [1280, 'dark']] as const)('at %i px, %s', (width, scheme) => {
  it.each([
    ['/auth/login', 'the login page', false],
    ['/admin', 'the 403 page', true],
    ['/no-such-page', 'the 404 page', true],
  ] as const)('%s (%s) fits, has targets of 24 px or more, and contrast to WCAG AA', async (path, _page, signedIn) => {
    const page = await pageOf(width, scheme, signedIn)
    await page.goto(url(path))
    await page.waitForLoadState('networkidle')
    await page.screenshot({ path: `${SCREENSHOTS}${path.replaceAll('/', '_')}-${width}-${scheme}.png`, fullPage: true })
    expect(await layoutProblems(page)).toEqual([])
    expect(await contrastViolations(page)).toEqual([])
  })
})
