// @ts-check
/**
 * WebSocket load for `npm run bench`: `connections` clients, each keeping `inflight` small messages on the way (a new
 * one as soon as an echo arrives), for `seconds`. Prints { rate } (echoed messages a second) as JSON. With one message
 * in flight the figure is the round trip's, not the throughput's.
 * node bench/ws-load.mjs <ws-url> [connections=32] [seconds=5] [bytes=32] [inflight=16]
 */
import { WebSocket } from 'ws'

const [url, connections = '32', seconds = '5', bytes = '32', inflight = '16'] = process.argv.slice(2)
if (!url) throw new Error('usage: ws-load.mjs <ws-url> [connections] [seconds] [bytes] [inflight]')
const payload = Buffer.alloc(Number(bytes), 'x')
let echoed = 0
let running = true
const sockets = await Promise.all(Array.from({ length: Number(connections) }, () => new Promise((resolve, reject) => {
  const ws = new WebSocket(url, { perMessageDeflate: false })
  ws.once('open', () => resolve(ws))
  ws.once('error', reject)
})))
const started = performance.now()
for (const ws of /** @type {WebSocket[]} */ (sockets)) {
  ws.on('message', () => {
    echoed++
    if (running) ws.send(payload)
  })
  for (let i = 0; i < Number(inflight); i++) ws.send(payload)
}
await new Promise(resolve => setTimeout(resolve, Number(seconds) * 1000))
running = false
const elapsed = (performance.now() - started) / 1000
for (const ws of /** @type {WebSocket[]} */ (sockets)) ws.terminate()
process.stdout.write(JSON.stringify({ rate: echoed / elapsed, echoed }))
