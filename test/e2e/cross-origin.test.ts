import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDevIam } from '../../dev/iam.mjs'
import { launchChromium } from '../helpers/browser'
import { startEchoBackend } from '../helpers/echo-backend'
import { startGateway, type RunningGateway } from '../helpers/gateway'

let iam: Awaited<ReturnType<typeof startDevIam>>
let echo: Awaited<ReturnType<typeof startEchoBackend>>
let gateway: RunningGateway
let browser: Browser
let foreign: Server
let foreignUrl: string

/** A page of another loopback origin (same site, other port: what SameSite=Lax lets through). */
function attackerPage(target: string): string {
  return `<!doctype html><html><body>
<form id="steal" method="post" action="${target}/auth/login" enctype="text/plain">
  <input name='{"username":"admin","password":"admin123","pad":"' value='"}'>
</form>
<script>
  fetch('${target}/api/transfer', { mode: 'no-cors', method: 'POST', credentials: 'include', body: 'amount=1000000' })
    .finally(() => setTimeout(() => document.getElementById('steal').submit(), 300))
</script>
</body></html>`
}

beforeAll(async () => {
  iam = await startDevIam()
  echo = await startEchoBackend()
  gateway = await startGateway({ APP_AUTH_BASE_URL: iam.url, APP_API_PROXY_TARGET: echo.url })
  foreign = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(attackerPage(gateway.url))
  })
  await new Promise<void>(resolve => foreign.listen(0, '127.0.0.1', resolve))
  foreignUrl = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}`
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  foreign?.closeAllConnections()
  await new Promise(resolve => foreign?.close(resolve))
  await gateway?.stop()
  await echo?.close()
  await iam?.close()
})

describe('cross-origin protection in a real browser', () => {
  it('refuses a form POST to /auth/login and a no-cors fetch to /api from another origin, and passes our own', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    // Signed in first, so the browser holds svc_session (SameSite=Lax sends it on same-site requests).
    await page.goto(`${gateway.url}/auth/login`)
    await page.locator('button[type=submit]:not([disabled])').waitFor()
    await page.getByLabel('Tên đăng nhập').fill('viewer')
    await page.getByLabel('Mật khẩu').fill('viewer123')
    await page.getByRole('button', { name: 'Đăng nhập', exact: true }).click()
    await page.waitForURL(`${gateway.url}/`)

    const loginsBefore = iam.requests.filter(r => r.path === '/auth/auth/login-v1').length
    const echoBefore = echo.received.length
    const gatewayAnswer = page.waitForResponse(response => response.url() === `${gateway.url}/auth/login` && response.request().method() === 'POST')
    await page.goto(foreignUrl)
    const answer = await gatewayAnswer
    expect(answer.status()).toBe(403)
    expect(await answer.json()).toMatchObject({ statusCode: 403, statusMessage: 'Yêu cầu khác nguồn gốc bị từ chối.' })
    await page.waitForLoadState('load')
    expect(iam.requests.filter(r => r.path === '/auth/auth/login-v1').length).toBe(loginsBefore)
    expect(echo.received.slice(echoBefore).some(request => request.url === '/transfer')).toBe(false)

    // The same requests from the gateway's own pages pass.
    await page.goto(`${gateway.url}/about`)
    const status = await page.evaluate(async () => (await fetch('/api/transfer', { method: 'POST', body: 'amount=1' })).status)
    expect(status).toBe(200)
    const own = echo.received.filter(request => request.url === '/transfer').at(-1)!
    expect(own.headers.authorization).toMatch(/^Bearer dev\./)
    await context.close()
  })
})
