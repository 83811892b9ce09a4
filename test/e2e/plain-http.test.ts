import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { en, vi } from '../../shared/messages'
import { launchChromium, useBrowserStack } from '../support/browser'

/**
 * A staging host over plain http, as a browser sees it: Chromium resolves `staging.test` to the gateway's loopback
 * address, so the page's origin is http://staging.test:<port>, which is not the browser's own machine, and the Secure
 * svc_session is dropped as on any http host. The login page must say why no sign-in sticks.
 */
const stack = useBrowserStack()
let staging: Browser
beforeAll(async () => {
  staging = await launchChromium(['--host-resolver-rules=MAP staging.test 127.0.0.1'])
})
afterAll(async () => {
  await staging?.close()
})

/** The text of the login page's alert, once there is one. */
async function alertText(page: Page): Promise<string> {
  await page.getByRole('alert').waitFor()
  return (await page.getByRole('alert').textContent())!.trim()
}

describe('the login page over plain http', () => {
  it.each([['vi-VN', vi, 'Đăng nhập', 'Tên đăng nhập', 'Mật khẩu'], ['en-US', en, 'Sign in', 'User name', 'Password']] as const)(
    'says why no sign-in sticks, before and after a try, in the page\'s language (%s); the browser keeps no session', async (locale, texts, submit, username, password) => {
      const context = await staging.newContext({ locale })
      try {
        const page = await context.newPage()
        const base = `http://staging.test:${stack.gateway.port}`
        await page.goto(`${base}/orders`)
        expect(new URL(page.url()).pathname).toBe('/auth/login')
        expect(await alertText(page)).toBe(texts.errors.plainHttp)
        await page.locator('button[type=submit]:not([disabled])').waitFor()
        await page.getByLabel(username).fill('sale')
        await page.getByLabel(password).fill('sale123')
        await page.getByRole('button', { name: submit, exact: true }).click()
        // The login answered 200, the browser dropped the cookie: the page says so, and stays.
        await expect.poll(() => page.locator('button[type=submit]').getAttribute('aria-busy')).toBe('false')
        expect(new URL(page.url()).pathname).toBe('/auth/login')
        expect(await alertText(page)).toBe(texts.errors.plainHttp)
        expect((await context.cookies()).map(cookie => cookie.name)).not.toContain('svc_session')
      }
      finally {
        await context.close()
      }
    })

  it('says nothing on the browser\'s own machine (http://127.0.0.1), where the Secure cookie is kept', async () => {
    const page = await stack.context.newPage()
    await page.goto(`${stack.gateway.url}/auth/login`)
    await page.locator('button[type=submit]:not([disabled])').waitFor()
    expect(await page.getByRole('alert').count()).toBe(0)
  })
})
