import type { BrowserContext, Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { axeViolations, useBrowserStack, waitForHydration } from '../support/browser'

// The ready page part of a user's own sessions (issue 41, item 4: app/components/SessionsList.vue, mounted by the
// playground at /sessions) in both languages, at 360 px, and a session ended from another browser: its tabs go to
// the login page (app/plugins/02.auth.ts checks every svcAuth.sessionCheckSeconds, 5 in the playground).
const stack = useBrowserStack()
const url = (path: string) => stack.gateway.url + path

/** Logs a browser context in as `username` (its cookie jar is the context's), without the login page. */
async function logIn(context: BrowserContext, username = 'sale', password = 'sale123'): Promise<void> {
  const answer = await context.request.post(url('/auth/login'), { data: { username, password } })
  expect(answer.status()).toBe(200)
}

async function openSessions(context: BrowserContext): Promise<Page> {
  const page = await context.newPage()
  await page.goto(url('/sessions'))
  await waitForHydration(page)
  await page.locator('.sessions__list').waitFor()
  return page
}

describe('the sessions page', () => {
  it('lists the user\'s sessions in Vietnamese and in English, and passes axe in both, at 360 px too', async () => {
    const other = await stack.browser.newContext({ locale: 'vi-VN' })
    const english = await stack.browser.newContext({ locale: 'en-US', viewport: { width: 360, height: 740 } })
    try {
      await logIn(stack.context, 'admin', 'admin123')
      await logIn(other, 'admin', 'admin123')
      await logIn(english, 'admin', 'admin123')
      const found: Record<string, string[]> = {}
      const vi = await openSessions(stack.context)
      await expect.poll(() => vi.getByRole('listitem').count()).toBe(3)
      expect(await vi.getByRole('heading', { level: 1 }).textContent()).toContain('Phiên đăng nhập')
      expect(await vi.locator('[data-current]').textContent()).toContain('Phiên này')
      expect(await vi.getByRole('button', { name: 'Kết thúc phiên Chrome on Linux' }).count()).toBe(2)
      found.vi = await axeViolations(vi)
      const en = await openSessions(english)
      expect(await en.getByRole('heading', { level: 1 }).textContent()).toContain('Sessions')
      expect(await en.locator('[data-current]').textContent()).toContain('This session')
      found.en = await axeViolations(en)
      // Usable on a phone: nothing wider than the screen.
      expect(await en.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360)
      await en.getByRole('button', { name: 'End all other sessions' }).click()
      await expect.poll(() => en.getByRole('status').textContent()).toContain('2 other sessions were ended.')
      expect(await en.getByRole('listitem').count()).toBe(1)
      found.enAfter = await axeViolations(en)
      expect(found).toEqual({ vi: [], en: [], enAfter: [] })
    }
    finally {
      await Promise.all([other.close(), english.close()])
    }
  })

  it('a session ended from another browser leaves its tabs on the login page within seconds', async () => {
    const ended = await stack.browser.newContext({ locale: 'vi-VN' })
    try {
      await logIn(stack.context)
      await logIn(ended)
      const tabs = [await ended.newPage(), await ended.newPage()]
      for (const [tab, path] of [[tabs[0]!, '/orders'], [tabs[1]!, '/']] as const) {
        await tab.goto(url(path))
        await waitForHydration(tab)
      }
      const page = await openSessions(stack.context)
      await page.locator('.sessions__item:not([data-current])').getByRole('button').click()
      await expect.poll(() => page.getByRole('status').textContent()).toContain('Đã kết thúc phiên.')
      // Both tabs, neither of which does anything: the check every 5 s (or a tab's coming into view) finds the session gone.
      await tabs[0]!.waitForURL(target => target.pathname === '/auth/login' && target.searchParams.get('redirect') === '/orders', { timeout: 15_000 })
      await tabs[1]!.waitForURL(target => target.pathname === '/auth/login', { timeout: 15_000 })
      // The user's own tab keeps its session.
      expect(await page.getByRole('listitem').count()).toBe(1)
    }
    finally {
      await ended.close()
    }
  })

  it('ending the current session from the list signs out: the login page', async () => {
    await logIn(stack.context)
    const page = await openSessions(stack.context)
    await page.getByRole('button', { name: 'Đăng xuất khỏi phiên này' }).click()
    await page.waitForURL(target => target.pathname === '/auth/login', { timeout: 10_000 })
    expect((await stack.context.cookies()).find(cookie => cookie.name === 'svc_session')).toBeUndefined()
  })
})
