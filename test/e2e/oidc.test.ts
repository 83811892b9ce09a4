import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { LOGIN_FORM } from '../../dev/oidc-provider.mjs'
import { axeViolations, useChromium, waitForHydration } from '../support/browser'
import { useOidcStack } from '../support/oidc'

// The playground behind a gateway with APP_AUTH_KIND=oidc, the development provider (its own login page; access
// tokens of 4 s, so working a few seconds needs a renewal), the sample backend checking the provider's userinfo.
const stack = useOidcStack({ backend: 'sample', provider: { accessTokenTtl: 4 } })
const url = (path: string) => stack.gateways[0]!.url + path
const chromium = useChromium()

/** From a protected page to the login page, its SSO button, the provider's own form, and back, hydrated. */
async function logInThroughProvider(page: Page, from: string, username = 'admin', password = 'admin123') {
  await page.goto(url(from))
  await page.waitForURL(at => at.pathname === '/auth/login' && at.searchParams.get('redirect') === from)
  await page.getByRole('button', { name: 'Đăng nhập bằng SSO' }).click()
  await page.waitForURL(`${stack.provider.url}/**`)
  await page.locator(LOGIN_FORM.username).fill(username)
  await page.locator(LOGIN_FORM.password).fill(password)
  await page.locator(LOGIN_FORM.submit).first().click()
  await page.waitForURL(url(from))
  await waitForHydration(page)
}

describe('OpenID Connect in Chromium: the provider\'s own login page', () => {
  it('logs in through it and lands on the page it started from; the orders load through /api', async () => {
    const page = await chromium.context.newPage()
    await logInThroughProvider(page, '/orders')
    await expect.poll(() => page.getByTestId('orders-table').locator('tbody tr').count()).toBeGreaterThan(0)
    expect(await page.getByTestId('user-name').textContent()).toBeTruthy()
    // The live orders' WebSocket, tunnelled with the session's token (the backend checks it at the provider).
    await expect.poll(() => page.getByTestId('live').getAttribute('data-state')).toBe('open')
  })

  it('keeps the session through an access-token expiry while the user keeps working', async () => {
    const page = await chromium.context.newPage()
    await logInThroughProvider(page, '/orders')
    const refreshes = stack.provider.counters.refresh_token
    for (let round = 0; round < 3; round++) {
      await page.waitForTimeout(2_500)
      await page.getByRole('navigation').getByRole('link', { name: 'Trang chủ' }).click()
      await page.getByRole('navigation').getByRole('link', { name: 'Đơn hàng' }).click()
      await page.waitForURL(url('/orders'))
      await expect.poll(() => page.getByTestId('orders-table').locator('tbody tr').count()).toBeGreaterThan(0)
      expect(await page.getByRole('alert').count()).toBe(0)
    }
    expect(stack.provider.counters.refresh_token).toBeGreaterThan(refreshes)
  })

  it('after a crafted /auth/sso link of 1,300 backslashes, the next SSO login still works', async () => {
    const page = await chromium.context.newPage()
    // The link an attacker sends: before, it left a 3,916-byte trips cookie that made every later one too big to keep.
    await page.goto(url(`/auth/sso?redirect=${encodeURIComponent(`/?${'\\'.repeat(1300)}`)}`))
    await page.waitForURL(`${stack.provider.url}/**`)
    const cookie = (await chromium.context.cookies()).find(({ name }) => name === '__Host-svc_oidc')
    expect(cookie?.value.length).toBeLessThan(1500)
    await logInThroughProvider(page, '/orders')
    await expect.poll(() => page.getByTestId('orders-table').locator('tbody tr').count()).toBeGreaterThan(0)
  })

  it('logs out at the gateway and at the provider, back on the app through its state check: the next login asks for the password again', async () => {
    const page = await chromium.context.newPage()
    await logInThroughProvider(page, '/orders/new')
    const ended = stack.provider.counters.end_session
    const returns: string[] = []
    page.on('request', (request) => {
      if (request.isNavigationRequest() && request.url().startsWith(url('/auth/logged-out'))) returns.push(request.url())
    })
    await page.getByRole('button', { name: 'Đăng xuất' }).click()
    await page.waitForURL(at => at.href.startsWith(url('/auth/login')))
    // The provider sent the browser back with the logout's state, which the gateway checked.
    expect(returns).toEqual([expect.stringMatching(/\/auth\/logged-out\?state=[\w-]{43}$/)])
    expect((await chromium.context.cookies()).map(cookie => cookie.name)).not.toContain('__Host-svc_oidc_logout')
    expect(stack.provider.counters.end_session).toBe(ended + 1)
    expect((await (await chromium.context.request.get(url('/auth/session'))).json()).user).toBeNull()
    await page.getByRole('button', { name: 'Đăng nhập bằng SSO' }).click()
    await page.waitForURL(`${stack.provider.url}/**`)
    await expect.poll(() => page.locator(LOGIN_FORM.password).count()).toBe(1)
  })

  it('the login page with the SSO button, and after a refusal at the provider, has no axe violation and says why', async () => {
    const page = await chromium.context.newPage()
    await page.goto(url('/auth/login?redirect=%2Forders'))
    expect(await page.getByRole('textbox').count()).toBe(0)
    expect(await axeViolations(page)).toEqual([])
    await page.getByRole('button', { name: 'Đăng nhập bằng SSO' }).click()
    await page.waitForURL(`${stack.provider.url}/**`)
    await page.locator(LOGIN_FORM.cancel).click()
    // Compared by parts: the router may rewrite `%2F` as `/` while the page hydrates.
    await page.waitForURL(at => at.pathname === '/auth/login' && at.searchParams.get('error') === 'ssoDenied' && at.searchParams.get('redirect') === '/orders')
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Đăng nhập SSO đã bị từ chối tại nhà cung cấp định danh.')
    expect(await axeViolations(page)).toEqual([])
  })
})
