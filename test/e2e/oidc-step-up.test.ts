import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { LOGIN_FORM, MFA_CODE } from '../../dev/oidc-provider.mjs'
import { useChromium, waitForHydration } from '../support/browser'
import { STEP_UP, useStepUpStack } from '../support/step-up-stack'

// Step-up in Chromium: the playground's /secure-report page reads /api/reports, a route that needs acr `mfa`; the
// development provider asks for the one-time code when acr_values holds mfa. A backend's RFC 9470 challenge too.
const stack = useStepUpStack()
const url = (path: string) => stack.gateway.url + path
const chromium = useChromium()

/** The provider's own form: a password alone, or with the one-time code when it asks for one. */
async function providerForm(page: Page, otp?: string) {
  await page.waitForURL(`${stack.provider.url}/**`)
  await page.locator(LOGIN_FORM.username).fill('admin')
  await page.locator(LOGIN_FORM.password).fill('admin123')
  if (otp) await page.locator(LOGIN_FORM.otp).fill(otp)
  await page.locator(LOGIN_FORM.submit).first().click()
}

/** A password-only session, on `from`. */
async function passwordOnly(page: Page, from: string) {
  await page.goto(url(from))
  await page.waitForURL(at => at.pathname === '/auth/login')
  await page.getByRole('button', { name: 'Đăng nhập bằng SSO' }).click()
  await providerForm(page)
  await page.waitForURL(url(from))
  await waitForHydration(page)
}

const fetchJson = (page: Page, path: string) => page.evaluate(async (target) => {
  const answer = await fetch(target, { headers: { accept: 'application/json' } })
  return { status: answer.status, body: await answer.json() }
}, path)

describe('Step-up in Chromium', () => {
  it('a script\'s 401 step-up answer, then useAuth().stepUp(): the provider asks for the code and the page comes back with the data', async () => {
    const page = await chromium.context.newPage()
    await passwordOnly(page, '/secure-report')
    expect(await fetchJson(page, '/api/reports/summary')).toEqual({ status: 401, body: { ...STEP_UP, message: STEP_UP.statusMessage, stepUp: { acr: 'mfa', maxAge: null } } })
    await page.getByTestId('load-secure').click()
    await expect.poll(() => page.getByRole('alert').textContent()).toContain(STEP_UP.statusMessage)
    await page.getByTestId('step-up').click()
    await providerForm(page, MFA_CODE)
    await page.waitForURL(url('/secure-report'))
    await waitForHydration(page)
    await page.getByTestId('load-secure').click()
    await expect.poll(() => page.getByTestId('secure-result').textContent()).toContain('Bearer ')
    expect(stack.provider.events.filter(event => event.type === 'login').map(event => event.detail).slice(-2)).toEqual(['pwd', 'mfa'])
  })

  it('a navigation to the route goes to the provider and back to the same address', async () => {
    const page = await chromium.context.newPage()
    await passwordOnly(page, '/')
    await page.goto(url('/api/reports/summary?month=5'))
    await providerForm(page, MFA_CODE)
    await page.waitForURL(url('/api/reports/summary?month=5'))
    expect(JSON.parse(await page.locator('body').innerText()).headers.authorization).toMatch(/^Bearer /)
  })

  it('a backend\'s RFC 9470 challenge gives the same answer', async () => {
    const page = await chromium.context.newPage()
    await passwordOnly(page, '/')
    expect(await fetchJson(page, '/api/strict/challenge')).toEqual({ status: 401, body: { ...STEP_UP, message: STEP_UP.statusMessage, stepUp: { acr: 'mfa', maxAge: 300 } } })
  })
})
