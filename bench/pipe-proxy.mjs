// @ts-check
/**
 * The memory baseline of `npm run bench`: the barest streaming proxy Node can be, node:http in front of node:http with
 * `pipe()` both ways and a keep-alive agent (no header rules, no session, no logging). `node bench/pipe-proxy.mjs PORT TARGET`
 */
import { Agent, createServer, request } from 'node:http'

const [port, upstream] = process.argv.slice(2)
if (!port || !upstream) throw new Error('usage: node bench/pipe-proxy.mjs PORT TARGET')
const target = new URL(upstream)
const agent = new Agent({ keepAlive: true, maxSockets: 256 })

createServer((req, res) => {
  const upstream = request({
    host: target.hostname,
    port: target.port,
    method: req.method,
    path: (req.url ?? '/').replace(/^\/api/, '') || '/',
    headers: { ...req.headers, host: target.host },
    agent,
  }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers)
    answer.pipe(res)
  })
  upstream.on('error', () => res.destroy())
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy()
  })
  req.pipe(upstream)
}).listen(Number(port), '127.0.0.1')
