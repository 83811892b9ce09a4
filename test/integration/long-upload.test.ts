import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEchoBackend } from '../helpers/echo-backend'
import { startGateway, type RunningGateway } from '../helpers/gateway'
import { rawConnection } from '../helpers/raw-http'

// Node's default server.requestTimeout (300 s, checked every 30 s) cut every upload through /api at 5 minutes. This
// file takes about 5.6 minutes on purpose: an upload that keeps moving for 335 s must arrive whole.
const UPLOAD_SECONDS = 335
const CHUNK = 'z'.repeat(1024)

let echo: Awaited<ReturnType<typeof startEchoBackend>>
let gateway: RunningGateway

beforeAll(async () => {
  echo = await startEchoBackend()
  gateway = await startGateway({ APP_AUTH_MOCK: 'true', APP_API_PROXY_TARGET: echo.url })
})
afterAll(async () => {
  await gateway?.stop()
  await echo?.close()
})

describe('an upload through /api that keeps moving', () => {
  it(`runs past Node's 300 s request limit (${UPLOAD_SECONDS} s)`, async () => {
    const { socket, received } = rawConnection(gateway.port)
    let closedEarly = false
    socket.on('close', () => {
      closedEarly = !received().includes('bodyBytes')
    })
    socket.write('POST /api/long-upload HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n')
    const chunks = UPLOAD_SECONDS / 5
    for (let i = 0; i < chunks; i++) {
      if (closedEarly) break
      socket.write(`${CHUNK.length.toString(16)}\r\n${CHUNK}\r\n`)
      await new Promise(resolve => setTimeout(resolve, 5_000))
    }
    expect(closedEarly).toBe(false)
    socket.write('0\r\n\r\n')
    await expect.poll(() => received(), { timeout: 10_000 }).toContain(`"bodyBytes":${chunks * CHUNK.length}`)
    expect(received()).toMatch(/^HTTP\/1\.1 200 /)
    socket.destroy()
  }, (UPLOAD_SECONDS + 30) * 1_000)
})
