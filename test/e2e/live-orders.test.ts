import { describe, expect, it } from 'vitest'
import { saveScreenshot, useBrowserStack } from '../support/browser'

const stack = useBrowserStack()

const url = (path: string) => stack.gateway.url + path

describe('the orders page is live (a WebSocket through the gateway\'s /api tunnel)', () => {
  it('connects with the session and shows an order created elsewhere as it happens', async () => {
    const page = await stack.context.newPage()
    const sockets: string[] = []
    page.on('websocket', socket => sockets.push(socket.url()))
    await page.goto(url('/orders'))
    await page.locator('button[type=submit]:not([disabled])').waitFor()
    await page.getByLabel('Tên đăng nhập').fill('sale')
    await page.getByLabel('Mật khẩu').fill('sale123')
    await page.getByRole('button', { name: 'Đăng nhập', exact: true }).click()
    await page.waitForURL(url('/orders'))
    await page.locator('[data-testid=live][data-state=open]').waitFor()
    // The events as they came (the backend also says 'viewed' every 15 s, so the newest may be another one).
    const events = () => page.getByTestId('live-event').allTextContents()
    await expect.poll(events).toContainEqual(expect.stringMatching(/^\s*Đã kết nối \(\d+ đơn\)\s*$/))
    expect(sockets).toEqual([`${url('/api/orders/live').replace(/^http/, 'ws')}`])

    // Another tab of the same user creates an order: the backend pushes it, the page shows it without reloading.
    const other = await stack.context.newPage()
    await other.goto(url('/about'))
    const created = await other.evaluate(async () => {
      const response = await fetch('/api/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ customer: 'Khách Trực Tiếp', total: 990_000 }) })
      return { status: response.status, order: await response.json() as { id: number } }
    })
    expect(created.status).toBe(201)
    await expect.poll(events).toContain(`Đơn mới: #${created.order.id} Khách Trực Tiếp`)
    await expect.poll(() => page.getByTestId('orders-table').textContent()).toContain('Khách Trực Tiếp')
    await saveScreenshot(page, 'orders-live', { fullPage: true })
  })
})
