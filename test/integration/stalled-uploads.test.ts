import { request } from 'node:http'
import type { Socket } from 'node:net'
import { describe, expect, it } from 'vitest'
import { MESSAGES } from '../../server/http/errors'
import { freePort, logEntries, type RunningGateway } from '../support/gateway'
import { scrape } from '../support/metrics'
import { rawConnection, rawRequest } from '../support/raw-http'
import { useStack } from '../support/stack'

// The third security review's flood: uploads that send a few bytes, then nothing, held every pooled backend
// connection with no login and no end; another client's /api request then waited with no answer.
const stack = useStack()

interface Stalled {
  socket: Socket
  received: () => string
  /** When its request was sent, and when its connection closed (ms since the epoch), once it has. */
  sentAt: number
  closedAt?: number
}

/** A `POST /api/upload` that declares 1,000,000 bytes, sends 11, then nothing; from `client` through a trusted proxy when given. */
function stalledUpload(gateway: RunningGateway, client?: string): Stalled {
  const { socket, received } = rawConnection(gateway.port)
  const stalled: Stalled = { socket, received, sentAt: Date.now() }
  socket.once('close', () => {
    stalled.closedAt = Date.now()
  })
  socket.on('error', () => {})
  const forwarded = client ? `X-Forwarded-For: ${client}\r\n` : ''
  socket.write(`POST /api/upload HTTP/1.1\r\nHost: 127.0.0.1\r\n${forwarded}Content-Type: application/octet-stream\r\nContent-Length: 1000000\r\n\r\nhello world`)
  return stalled
}

/** GET /api/ping as another client: its status, headers, body and how long it took. */
async function ping(gateway: RunningGateway, client?: string) {
  const started = Date.now()
  const answer = await rawRequest(`${gateway.url}/api/ping`, { headers: client ? { 'x-forwarded-for': client } : {} })
  return { ...answer, ms: Date.now() - started }
}

const accessStatuses = (gateway: RunningGateway) => logEntries(gateway.stdout()).filter(entry => entry.type === 'access' && entry.path === '/api/upload').map(entry => entry.status)

describe('stalled uploads (APP_API_BODY_IDLE_TIMEOUT, APP_API_UPLOADS_PER_CLIENT)', () => {
  it('260 stalled uploads from one address: 16 held at a time, the rest 429 at once, another client answered at once, the held ones cut at the idle limit with 408', async () => {
    const metricsPort = await freePort()
    const gateway = await stack.gatewayWith({ APP_API_BODY_IDLE_TIMEOUT: '3', APP_METRICS_PORT: String(metricsPort) })
    const flood = Array.from({ length: 260 }, () => stalledUpload(gateway))
    await expect.poll(() => flood.filter(upload => upload.received().startsWith('HTTP/1.1 429 ')).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(200)
    expect((await scrape(metricsPort)).get('svc_gateway_backend_connections_busy')).toBeLessThanOrEqual(16)

    const other = await ping(gateway)
    expect(other.status).toBe(200)
    expect(other.ms).toBeLessThan(2_000)

    await expect.poll(() => flood.every(upload => upload.closedAt), { timeout: 20_000 }).toBe(true)
    const refused = flood.filter(upload => upload.received().startsWith('HTTP/1.1 429 '))
    const cut = flood.filter(upload => upload.received().startsWith('HTTP/1.1 408 '))
    // 16 at a time: more are cut only when the flood took longer to send than the idle limit (a loaded machine).
    expect(refused.length + cut.length).toBe(260)
    expect(cut.length).toBeGreaterThanOrEqual(16)
    expect(refused[0]!.received()).toMatch(/\r\nretry-after: 1\r\n/i)
    expect(refused[0]!.received()).toContain(JSON.stringify(MESSAGES.tooManyUploads))
    expect(cut[0]!.received()).toContain(JSON.stringify(MESSAGES.bodyTimeout))
    expect(cut[0]!.received()).toMatch(/\r\nconnection: close\r\n/i)
    // Cut at the idle limit: not before 3 s of silence, and not long after.
    for (const upload of cut) expect(upload.closedAt! - upload.sentAt).toBeGreaterThanOrEqual(2_900)
    for (const upload of cut) expect(upload.closedAt! - upload.sentAt).toBeLessThan(8_000)

    // One access line each (the log is written asynchronously: wait for it), and the metric.
    await expect.poll(() => accessStatuses(gateway).filter(status => status === 429).length).toBe(refused.length)
    await expect.poll(() => accessStatuses(gateway).filter(status => status === 408).length).toBe(cut.length)
    const samples = await scrape(metricsPort)
    expect(samples.get('svc_gateway_proxy_refusals_total{reason="uploads_per_client"}')).toBe(refused.length)
    expect(samples.get('svc_gateway_proxy_refusals_total{reason="body_idle"}')).toBe(cut.length)
    expect(samples.get('svc_gateway_backend_connections_busy')).toBe(0)
    // The slots came back: a new upload from the same address goes through whole.
    const after = await rawRequest(`${gateway.url}/api/upload`, { method: 'POST', body: 'x'.repeat(1000) })
    expect(after.status).toBe(200)
    expect(JSON.parse(after.body).bodyBytes).toBe(1000)
  })

  it('at the cap, a body already whole with its headers goes on (small JSON bodies sent at once); one still arriving is 429', async () => {
    const metricsPort = await freePort()
    const gateway = await stack.gatewayWith({ APP_API_UPLOADS_PER_CLIENT: '2', APP_METRICS_PORT: String(metricsPort) })
    const held = [stalledUpload(gateway), stalledUpload(gateway)]
    await expect.poll(async () => (await scrape(metricsPort)).get('svc_gateway_backend_connections_busy'), { timeout: 5_000 }).toBe(2)
    const small = await Promise.all(Array.from({ length: 20 }, (_, i) => rawRequest(`${gateway.url}/api/items/${i}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ i, pad: 'x'.repeat(2_000) }),
    })))
    expect(small.map(answer => answer.status)).toEqual(Array.from({ length: 20 }, () => 200))
    const third = stalledUpload(gateway)
    await expect.poll(() => third.closedAt, { timeout: 5_000 }).toBeDefined()
    expect(third.received()).toMatch(/^HTTP\/1\.1 429 /)
    for (const upload of held) upload.socket.destroy()
  })

  it('a pool filled from many addresses: a request waits APP_API_POOL_WAIT, then 503 with Retry-After; a freed connection goes to the one waiting; /readyz and the metrics show it', async () => {
    const metricsPort = await freePort()
    const gateway = await stack.gatewayWith({
      APP_TRUST_PROXY: '1',
      APP_API_PROXY_CONNECTIONS: '8',
      APP_API_POOL_WAIT: '4',
      APP_API_BODY_IDLE_TIMEOUT: '8',
      APP_METRICS_PORT: String(metricsPort),
    })
    const flood = Array.from({ length: 8 }, (_, index) => stalledUpload(gateway, `203.0.113.${index + 1}`))
    await expect.poll(async () => (await scrape(metricsPort)).get('svc_gateway_backend_connections_busy'), { timeout: 5_000 }).toBe(8)
    const ready = await rawRequest(`${gateway.url}/readyz`)
    expect(ready.status).toBe(200)
    expect(JSON.parse(ready.body).checks.backendPool).toBe('saturated')

    const refused = await ping(gateway, '198.51.100.7')
    expect(refused.status).toBe(503)
    expect(refused.headers['retry-after']).toBe('4')
    expect(JSON.parse(refused.body)).toMatchObject({ statusCode: 503, statusMessage: MESSAGES.apiBusy })
    expect(refused.ms).toBeGreaterThanOrEqual(3_900)

    const waiting = ping(gateway, '198.51.100.8')
    await expect.poll(async () => (await scrape(metricsPort)).get('svc_gateway_backend_pool_waiting'), { timeout: 3_000 }).toBe(1)
    flood[0]!.socket.destroy()
    // Served (200), not refused: the freed connection went to it before its wait ran out.
    expect((await waiting).status).toBe(200)

    const samples = await scrape(metricsPort)
    expect(samples.get('svc_gateway_proxy_refusals_total{reason="pool_wait"}')).toBe(1)
    expect(samples.get('svc_gateway_backend_connections_max')).toBe(8)
    // The rest are cut at the idle limit, and the pool is free again.
    await expect.poll(() => flood.every(upload => upload.closedAt), { timeout: 15_000 }).toBe(true)
    expect((await ping(gateway, '198.51.100.9')).status).toBe(200)
    expect(JSON.parse((await rawRequest(`${gateway.url}/readyz`)).body).checks.backendPool).toBe('ok')
  })

  it('counts only the client\'s silences: a backend that reads nothing for 3 s never makes a 32 MiB upload idle (limit 1 s)', async () => {
    const gateway = await stack.gatewayWith({ APP_API_BODY_IDLE_TIMEOUT: '1' })
    const body = Buffer.alloc(32 * 1024 * 1024, 7)
    const answer = await new Promise<{ status: number, text: string }>((resolve, reject) => {
      const req = request(`${gateway.url}/api/slow-read?ms=3000`, { method: 'POST', headers: { 'content-length': String(body.length) } }, (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk) => {
          text += chunk
        })
        res.on('end', () => resolve({ status: res.statusCode!, text }))
      })
      req.on('error', reject)
      req.end(body)
    })
    expect(answer.status).toBe(200)
    expect(JSON.parse(answer.text).bodyBytes).toBe(body.length)
  })

  it('an upload that stops after the backend has answered is cut too: the answer ends short, with an access line and the metric', async () => {
    const metricsPort = await freePort()
    const gateway = await stack.gatewayWith({ APP_API_BODY_IDLE_TIMEOUT: '1', APP_METRICS_PORT: String(metricsPort) })
    const { socket, received } = rawConnection(gateway.port)
    const closed = new Promise(resolve => socket.once('close', resolve))
    socket.write('POST /api/answer-first HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n12345')
    await closed
    expect(received()).toMatch(/^HTTP\/1\.1 200 /)
    expect(received()).toContain('answered before the body')
    const line = () => logEntries(gateway.stdout()).find(entry => entry.type === 'access' && entry.path === '/api/answer-first')
    await expect.poll(line).toMatchObject({ status: 200, aborted: true })
    expect((await scrape(metricsPort)).get('svc_gateway_proxy_refusals_total{reason="body_idle"}')).toBe(1)
  })
})
