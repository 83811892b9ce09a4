// @ts-check
/**
 * A WebSocket echo server for `npm run bench` (the `ws` package): every message comes back as it was.
 * `node bench/ws-echo.mjs PORT`
 */
import { createServer } from 'node:http'
import { WebSocketServer } from 'ws'

if (!process.argv[2]) throw new Error('usage: node bench/ws-echo.mjs PORT')
const port = Number(process.argv[2])
const server = createServer((_req, res) => res.writeHead(404).end())
const wss = new WebSocketServer({ server, perMessageDeflate: false })
wss.on('connection', (ws) => {
  ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }))
})
server.listen(port, '127.0.0.1')
