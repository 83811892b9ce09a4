// @ts-check
/**
 * The memory baseline of `npm run bench`: the barest streaming proxy Node can be, node:http in front of node:http with
 * `pipe()` both ways and a keep-alive agent (no header rules, no session, no logging). `node bench/pipe-proxy.mjs PORT TARGET`
 */
import { Agent, createServer, request } from 'node:http'

const target = new URL(process.argv[3] ?? 'http://127.0.0.1:4100')
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
}).listen(Number(process.argv[2] ?? 4300), '127.0.0.1')
