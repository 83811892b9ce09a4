// @ts-check
/**
 * `node bench/upload-defaults.mjs`: the figures behind the defaults of APP_API_UPLOADS_PER_CLIENT (16),
 * APP_API_BODY_IDLE_TIMEOUT (30 s) and APP_API_POOL_WAIT (5 s) (docs/defences.md). Against the built playground
 * (BENCH_SKIP_BUILD=1 reuses it) and a backend that watches the bodies it receives:
 * 1. how many request bodies one Chromium page has in flight at once when it starts 32 uploads (HTTP/1.1);
 * 2. the longest silence inside an upload from Chromium on an emulated slow link (50 kB/s up, 400 ms latency);
 * 3. the review's flood at the defaults: 260 stalled uploads from one address, how many backend connections they
 *    hold and how long another client's GET /api/ping takes meanwhile.
 */
import { createServer } from 'node:http'
import { connect } from 'node:net'
import { chromium } from 'playwright-core'
import { Bench, log } from './setup.mjs'

/** A backend that reads every body, counting bodies in flight (their peak) and the longest gap between two chunks. */
async function watchingBackend() {
  const seen = { inFlight: 0, peak: 0, longestGapMs: 0 }
  const server = createServer((req, res) => {
    if (req.method === 'GET') return res.end('{"pong":true}')
    seen.inFlight++
    seen.peak = Math.max(seen.peak, seen.inFlight)
    let last = performance.now()
    req.on('data', () => {
      const now = performance.now()
      seen.longestGapMs = Math.max(seen.longestGapMs, now - last)
      last = now
    })
    const done = () => {
      seen.inFlight--
      res.end('{}')
    }
    req.once('end', done)
    req.once('aborted', () => seen.inFlight--)
  })
  server.requestTimeout = 0
  await new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  const address = /** @type {import('node:net').AddressInfo} */ (server.address())
  return { url: `http://127.0.0.1:${address.port}`, seen, server }
}

const bench = new Bench()
const backend = await watchingBackend()
const metricsPort = String(await import('./processes.mjs').then(m => m.freePort()))
try {
  const gateway = await bench.startGateway('gateway (shipped upload defaults)', { APP_API_PROXY_TARGET: backend.url, APP_METRICS_PORT: metricsPort, APP_METRICS_HOST: '127.0.0.1' }, 'upload-defaults')
  const origin = `http://127.0.0.1:${gateway.port}`
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium-headless-shell', headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking'] })
  const page = await browser.newPage()
  await page.goto(`${origin}/auth/login`)

  // 1. 32 uploads of 2 MiB started at once by one page, each paced by an emulated 2 MB/s link so they overlap.
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 20, downloadThroughput: 2_000_000, uploadThroughput: 2_000_000 })
  backend.seen.peak = 0
  const statuses = await page.evaluate(async () => Promise.all(Array.from({ length: 32 }, () => fetch('/api/upload', { method: 'POST', body: new Uint8Array(2 * 1024 * 1024) }).then(r => r.status))))
  log(`1. one Chromium page starting 32 uploads at once: at most ${backend.seen.peak} bodies in flight at the backend (statuses: ${[...new Set(statuses)].join(', ')})`)

  // 2. One upload of 300 kB on a slow link.
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 400, downloadThroughput: 50_000, uploadThroughput: 50_000 })
  backend.seen.longestGapMs = 0
  const started = performance.now()
  await page.evaluate(async () => (await fetch('/api/upload', { method: 'POST', body: new Uint8Array(300_000) })).status)
  log(`2. a 300 kB upload on an emulated 50 kB/s link (${((performance.now() - started) / 1000).toFixed(1)} s): longest silence between two chunks ${backend.seen.longestGapMs.toFixed(0)} ms`)
  await browser.close()

  // 3. The review's flood at the defaults.
  const sockets = Array.from({ length: 260 }, () => {
    const socket = connect(gateway.port, '127.0.0.1')
    socket.on('error', () => {})
    socket.write('POST /api/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\nhello world')
    return socket
  })
  await new Promise(resolve => setTimeout(resolve, 1_000))
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  const busy = /^svc_gateway_backend_connections_busy (\d+)/m.exec(metrics)?.[1]
  const refused = /^svc_gateway_proxy_refusals_total\{reason="uploads_per_client"\} (\d+)/m.exec(metrics)?.[1]
  const pingStarted = performance.now()
  const ping = await fetch(`${origin}/api/ping`)
  log(`3. 260 stalled uploads from one address: ${busy} of 256 backend connections held, ${refused} refused with 429; another client's GET /api/ping: ${ping.status} in ${(performance.now() - pingStarted).toFixed(0)} ms`)
  for (const socket of sockets) socket.destroy()
}
finally {
  await bench.close()
  backend.server.close()
  backend.server.closeAllConnections()
}
