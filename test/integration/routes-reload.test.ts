import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEchoBackend } from '../support/echo-backend'
import { logEntries, type RunningGateway } from '../support/gateway'
import { useStack } from '../support/stack'

type Echo = Awaited<ReturnType<typeof startEchoBackend>>

const stack = useStack({ backend: 'echo', backendPath: '/d' })
let orders: Echo
let billing: Echo
let gateway: RunningGateway
const file = join(mkdtempSync(join(tmpdir(), 'svc-routes-reload-')), 'routes.yaml')

const ordersOnly = () => `routes:\n  - name: orders\n    prefix: /api/orders\n    target: ${orders.url}/o\n    token: none\n`
const withBilling = () => `${ordersOnly()}  - name: billing\n    prefix: /api/billing\n    target: ${billing.url}/b\n    token: none\n`

beforeAll(async () => {
  ;[orders, billing] = await Promise.all([startEchoBackend(), startEchoBackend()])
  writeFileSync(file, ordersOnly())
  gateway = await stack.gatewayWith({ APP_API_ROUTES_FILE: file })
})
afterAll(async () => {
  await gateway?.stop()
  await Promise.all([orders?.close(), billing?.close()])
})

/** The gateway's log lines about the routes file so far. */
const routeLines = () => logEntries(gateway.stdout()).filter(line => line.type === 'routes')

describe('SIGHUP re-reads the routes file', () => {
  it('under load: a route is added, a bad file is logged and the old routes kept, and no request is lost', async () => {
    // Eight clients in a loop, and a download that lasts across both reloads.
    let running = true
    const statuses: number[] = []
    const clients = Array.from({ length: 8 }, async (_, client) => {
      for (let index = 0; running; index++) {
        const response = await fetch(`${gateway.url}/api/orders/c${client}/${index}`, { method: index % 2 ? 'POST' : 'GET', body: index % 2 ? 'x'.repeat(10_000) : undefined })
        statuses.push(response.status)
        await response.arrayBuffer()
      }
    })
    const download = fetch(`${gateway.url}/api/orders/slow-stream?seconds=2`).then(async response => [response.status, (await response.arrayBuffer()).byteLength])
    try {
      await reloadUnderLoad(statuses)
    }
    finally {
      running = false
    }
    await Promise.all(clients)
    expect(await download).toEqual([200, 20 * 64 * 1024])
    expect(statuses.filter(status => status !== 200)).toEqual([])
    expect(gateway.process.exitCode).toBeNull()
  })
})

/** Adds a route by SIGHUP, then tries a file that does not check, while `statuses` grows; checks what each did. */
async function reloadUnderLoad(statuses: number[]) {
  await expect.poll(() => statuses.length, { timeout: 20_000 }).toBeGreaterThan(50)
  expect((await fetch(`${gateway.url}/api/billing/x`)).status).toBe(200) // the default backend's, before
  expect(stack.echo.received.at(-1)!.url).toBe('/d/billing/x')

  writeFileSync(file, withBilling())
  gateway.process.kill('SIGHUP')
  await expect.poll(() => routeLines().length, { timeout: 20_000 }).toBe(1)
  expect(routeLines()[0]).toMatchObject({ level: 'info', routes: 2, msg: 'đã nạp lại APP_API_ROUTES_FILE: 2 tuyến.' })
  const sent = statuses.length
  await expect.poll(() => statuses.length, { timeout: 20_000 }).toBeGreaterThan(sent + 50)
  const added = await fetch(`${gateway.url}/api/billing/x`)
  expect(added.status).toBe(200)
  expect(billing.received.at(-1)!.url).toBe('/b/x')

  writeFileSync(file, `${withBilling()}  - name: cms\n    prefix: /api/cms\n    target: http://127.0.0.1:9\n    permission: [/a]\n`)
  gateway.process.kill('SIGHUP')
  await expect.poll(() => routeLines().length, { timeout: 20_000 }).toBe(2)
  expect(routeLines()[1]).toMatchObject({ level: 'error', msg: 'không nạp lại được APP_API_ROUTES_FILE, giữ các tuyến cũ: APP_API_ROUTES_FILE: tuyến #3 (\'cms\'), trường permission: không có trường này (các trường: name, prefix, target, token, permissions, anyPermissions, timeout, websocket, headers, resource, scope, exchange, acr, maxAge).' })
  const before = statuses.length
  await expect.poll(() => statuses.length, { timeout: 20_000 }).toBeGreaterThan(before + 50)
  expect((await fetch(`${gateway.url}/api/billing/y`)).status).toBe(200)
  expect(billing.received.at(-1)!.url).toBe('/b/y')
}
