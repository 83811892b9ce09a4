import type { BrowserContext, Page } from 'playwright-core'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { RunningGateway } from '../support/gateway'
import { axeViolations, useBrowserStack } from '../support/browser'

// The playground's pages follow the browser's languages (appConfig.svcAuth.locale 'auto'): a browser that prefers
// English gets the layer's pages in English, the contract's errors in English text, and the IAM's own message as it
// came. Each gateway below makes one error of the contract's table happen for real.
const stack = useBrowserStack({ gateway: { APP_RATE_LIMIT_PER_USER: '2' } })
const gateways: Record<'noBaseUrl' | 'badMappingNoOtp' | 'mockNoProxy', RunningGateway> = {} as never
let context: BrowserContext

beforeAll(async () => {
  ;[gateways.noBaseUrl, gateways.badMappingNoOtp, gateways.mockNoProxy] = await Promise.all([
    stack.gatewayWith({ APP_AUTH_BASE_URL: '' }),
    stack.gatewayWith({ APP_AUTH_MAPPING_TOKEN: 'body.nowhere', APP_AUTH_ENDPOINTS_OTP_SEND: '' }),
    stack.gatewayWith({ APP_AUTH_MOCK: 'true', APP_API_PROXY_TARGET: '' }),
  ])
})
beforeEach(async () => {
  context = await stack.browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' })
})
afterEach(async () => {
  await context.close()
})

async function openLogin(base: string, username = '', password = '', path = '/auth/login'): Promise<Page> {
  const page = await context.newPage()
  await page.goto(base + path)
  await page.locator('button[type=submit]:not([disabled])').waitFor()
  if (username) await page.getByLabel('User name').fill(username)
  if (password) await page.getByLabel('Password', { exact: true }).fill(password)
  return page
}

const signIn = (page: Page) => page.getByRole('button', { name: 'Sign in', exact: true }).click()
const alertText = (page: Page) => page.getByRole('alert').textContent().then(text => text?.trim())

describe('the layer\'s pages in English (a browser that prefers English, appConfig.svcAuth.locale \'auto\')', () => {
  it('the login page: <html lang="en">, every text in English, the app\'s own text where it overrides one, no axe violation', async () => {
    const page = await openLogin(stack.gateway.url)
    expect(await page.getAttribute('html', 'lang')).toBe('en')
    expect(await page.title()).toBe('Sign in')
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Sign in')
    expect(await page.locator('.login__lead').textContent()).toContain('Use your company account (IAM) to manage orders.')
    await page.getByLabel('Sign in with a one-time code').check()
    await page.getByLabel('Text message').check()
    expect(await page.getByRole('button', { name: 'Send code' }).isVisible()).toBe(true)
    // Every text of the layer (the app's product name and the IAM's application names are theirs).
    const layerText = await page.locator('main').evaluate((main) => {
      const copy = main.cloneNode(true) as HTMLElement
      copy.querySelectorAll('.login__product, option').forEach(node => node.remove())
      return copy.textContent ?? ''
    })
    expect(layerText).toContain('One-time code method')
    expect(layerText).not.toMatch(/[ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]/i)
    expect(await axeViolations(page)).toEqual([])
  })

  it('the fields\' own checks, focus on the first wrong field', async () => {
    const page = await openLogin(stack.gateway.url)
    await signIn(page)
    expect(await page.locator('#login-username-error').textContent()).toContain('Please enter your user name.')
    expect(await page.locator('#login-password-error').textContent()).toContain('Please enter your password.')
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('login-username')
  })

  it('400 missing credentials (the request reaches the gateway without its password)', async () => {
    const page = await openLogin(stack.gateway.url, 'admin', 'admin123')
    await page.route('**/auth/login', route => route.request().method() === 'POST'
      ? route.continue({ postData: JSON.stringify({ username: 'admin' }) })
      : route.continue())
    const answer = page.waitForResponse(response => response.url().endsWith('/auth/login') && response.request().method() === 'POST')
    await signIn(page)
    expect(await (await answer).json()).toMatchObject({ statusCode: 400, statusMessage: 'Thiếu tên đăng nhập hoặc mật khẩu.' })
    await expect.poll(() => alertText(page)).toBe('The user name or password is missing.')
  })

  it('400 OTP sending not configured', async () => {
    const page = await openLogin(gateways.badMappingNoOtp.url, 'otp.sms', 'otp123')
    await page.getByLabel('Sign in with a one-time code').check()
    await page.getByLabel('Text message').check()
    await page.getByRole('button', { name: 'Send code' }).click()
    await expect.poll(() => alertText(page)).toBe('Sending one-time codes is not configured (auth.endpoints.otpSend).')
  })

  it('401: the IAM\'s own message, as it came', async () => {
    const page = await openLogin(stack.gateway.url, 'sale', 'wrong')
    await signIn(page)
    await expect.poll(() => alertText(page)).toBe('Tên đăng nhập hoặc mật khẩu không đúng.')
  })

  it('429 locked out, with its seconds', async () => {
    const page = await openLogin(stack.gateway.url)
    for (let attempt = 0; attempt < 3; attempt++) {
      await page.getByLabel('User name').fill('ops')
      await page.getByLabel('Password', { exact: true }).fill('wrong')
      await signIn(page)
      await page.getByRole('alert').waitFor()
    }
    await expect.poll(() => alertText(page)).toMatch(/^Too many attempts\. Please try again in \d+ seconds\.$/)
  })

  it('500 IAM base address not configured', async () => {
    const page = await openLogin(gateways.noBaseUrl.url, 'admin', 'admin123')
    await signIn(page)
    await expect.poll(() => alertText(page)).toBe('auth.baseURL is not configured (APP_AUTH_BASE_URL).')
  })

  it('500 no access token at the mapped path', async () => {
    const page = await openLogin(gateways.badMappingNoOtp.url, 'admin', 'admin123')
    await signIn(page)
    await expect.poll(() => alertText(page)).toBe('The IAM returned no accessToken (check auth.mapping.token).')
  })

  it('500 API target not configured, on an app page that shows the gateway\'s errors through useAuthMessages()', async () => {
    const page = await openLogin(gateways.mockNoProxy.url, 'admin', 'anything', '/auth/login?redirect=%2Forders')
    await signIn(page)
    await page.waitForURL(`${gateways.mockNoProxy.url}/orders`)
    const alert = page.getByRole('alert')
    await expect.poll(() => alert.textContent().then(text => text?.trim())).toBe('apiProxyTarget is not configured.')
    expect(await alert.getAttribute('lang')).toBe('en')
  })

  it('the 500 page, the gateway\'s error in English, without an axe violation', async () => {
    const page = await openLogin(gateways.mockNoProxy.url, 'admin', 'anything', '/auth/login?redirect=%2Forders%2F1')
    await signIn(page)
    await page.waitForURL(`${gateways.mockNoProxy.url}/orders/1`)
    expect((await page.reload())?.status()).toBe(500)
    expect(await page.getAttribute('html', 'lang')).toBe('en')
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Something went wrong')
    expect(await page.locator('.error-page__message').textContent()).toContain('apiProxyTarget is not configured.')
    expect(await axeViolations(page)).toEqual([])
  })

  it('the 403 and 404 pages, without an axe violation', async () => {
    const page = await openLogin(stack.gateway.url, 'viewer', 'viewer123', '/auth/login?redirect=%2Fabout')
    await signIn(page)
    await page.waitForURL(`${stack.gateway.url}/about`)
    const response = await page.goto(`${stack.gateway.url}/admin`)
    expect(response?.status()).toBe(403)
    expect(await page.getAttribute('html', 'lang')).toBe('en')
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Access denied')
    expect(await page.locator('.error-page__message').textContent()).toContain('You do not have permission to open this page.')
    expect(await page.getByRole('button', { name: 'Go to the home page' }).isVisible()).toBe(true)
    expect(await axeViolations(page)).toEqual([])

    expect((await page.goto(`${stack.gateway.url}/no-such-page`))?.status()).toBe(404)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Page not found')
    expect(await page.locator('.error-page__message').textContent()).toContain('The page you are looking for does not exist or has moved.')
    expect(await axeViolations(page)).toEqual([])
  })

  it('the logout confirmation page another site sends the browser to; caches told the answer varies by language', async () => {
    const answer = await fetch(`${stack.gateway.url}/auth/logout`, { headers: { 'sec-fetch-site': 'cross-site', 'accept-language': 'en-GB,en;q=0.8' } })
    expect(answer.headers.get('vary')).toBe('Accept-Language')
    const html = await answer.text()
    expect(html).toContain('<html lang="en">')
    expect(html).toContain('<h1>Do you want to sign out?</h1>')
    const login = await fetch(`${stack.gateway.url}/auth/login`, { headers: { 'accept-language': 'en' } })
    expect(login.headers.get('vary')).toContain('Accept-Language')
  })

  it('a browser that prefers Vietnamese (or a language the layer does not speak) keeps Vietnamese', async () => {
    for (const language of ['vi-VN,vi;q=0.9,en;q=0.8', 'fr-FR,fr;q=0.9']) {
      const html = await (await fetch(`${stack.gateway.url}/auth/login`, { headers: { 'accept-language': language } })).text()
      expect(html, language).toMatch(/<html[^>]*lang="vi"/)
      expect(html, language).toContain('Đăng nhập')
    }
  })
})
