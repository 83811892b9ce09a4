import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useBrowserStack } from '../support/browser'

const stack = useBrowserStack({ backend: 'echo' })
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
  foreign = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(attackerPage(stack.gateway.url))
  })
  await new Promise<void>(resolve => foreign.listen(0, '127.0.0.1', resolve))
  foreignUrl = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}`
})
afterAll(async () => {
  foreign?.closeAllConnections()
  await new Promise(resolve => foreign?.close(resolve))
})

describe('cross-origin protection in a real browser', () => {
  it('refuses a form POST to /auth/login and a no-cors fetch to /api from another origin, and passes our own', async () => {
    const page = await stack.context.newPage()
    // Signed in first, so the browser holds svc_session (SameSite=Lax sends it on same-site requests).
    await page.goto(`${stack.gateway.url}/auth/login`)
    await page.locator('button[type=submit]:not([disabled])').waitFor()
    await page.getByLabel('Tên đăng nhập').fill('viewer')
    await page.getByLabel('Mật khẩu').fill('viewer123')
    await page.getByRole('button', { name: 'Đăng nhập', exact: true }).click()
    await page.waitForURL(`${stack.gateway.url}/`)

    const loginsBefore = stack.iam.requests.filter(r => r.path === '/auth/auth/login-v1').length
    const echoBefore = stack.echo.received.length
    const gatewayAnswer = page.waitForResponse(response => response.url() === `${stack.gateway.url}/auth/login` && response.request().method() === 'POST')
    await page.goto(foreignUrl)
    const answer = await gatewayAnswer
    expect(answer.status()).toBe(403)
    expect(await answer.json()).toMatchObject({ statusCode: 403, statusMessage: 'Yêu cầu khác nguồn gốc bị từ chối.' })
    await page.waitForLoadState('load')
    expect(stack.iam.requests.filter(r => r.path === '/auth/auth/login-v1').length).toBe(loginsBefore)
    expect(stack.echo.received.slice(echoBefore).some(request => request.url === '/transfer')).toBe(false)

    // The same requests from the gateway's own pages pass.
    await page.goto(`${stack.gateway.url}/about`)
    const status = await page.evaluate(async () => (await fetch('/api/transfer', { method: 'POST', body: 'amount=1' })).status)
    expect(status).toBe(200)
    const own = stack.echo.received.filter(request => request.url === '/transfer').at(-1)!
    expect(own.headers.authorization).toMatch(/^Bearer dev\./)
  })
})
