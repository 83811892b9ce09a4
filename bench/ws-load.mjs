// @ts-check
/**
 * WebSocket load for `npm run bench`: `connections` clients, each sending a small message and the next one as soon as
 * its echo arrives, for `seconds`. Prints { rate } (echoed messages a second) as JSON.
 * node bench/ws-load.mjs <ws-url> [connections=32] [seconds=5] [bytes=32]
 */
import { WebSocket } from 'ws'

const [url, connections = '32', seconds = '5', bytes = '32'] = process.argv.slice(2)
if (!url) throw new Error('usage: ws-load.mjs <ws-url> [connections] [seconds] [bytes]')
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
  ws.send(payload)
}
await new Promise(resolve => setTimeout(resolve, Number(seconds) * 1000))
running = false
const elapsed = (performance.now() - started) / 1000
for (const ws of /** @type {WebSocket[]} */ (sockets)) ws.terminate()
process.stdout.write(JSON.stringify({ rate: echoed / elapsed, echoed }))
