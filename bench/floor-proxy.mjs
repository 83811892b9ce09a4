// @ts-check
/**
 * The throughput floor of the gateway's base in `npm run bench`: node:http in front of undici's `dispatch`, the same
 * two parts the gateway proxies with (and @fastify/http-proxy too), with nothing else: no session, no header rules, no
 * routing, no logging, no error answers. No proxy built on node:http and undici can serve more than this; its ratio to
 * @fastify/http-proxy is the most any such proxy can reach. `node bench/floor-proxy.mjs PORT TARGET`
 */
import { createServer } from 'node:http'
import { Agent } from 'undici'

const [port, upstream] = process.argv.slice(2)
if (!port || !upstream) throw new Error('usage: node bench/floor-proxy.mjs PORT TARGET')
const target = new URL(upstream)
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 })

createServer((req, res) => {
  const headers = { ...req.headers, host: target.host }
  delete headers.connection
  agent.dispatch({
    origin: target.origin,
    path: (req.url ?? '/').replace(/^\/api/, '') || '/',
    method: /** @type {import('undici').Dispatcher.HttpMethod} */ (req.method),
    headers,
    body: null,
  }, {
    onRequestStart() {},
    onResponseStart(_controller, statusCode, responseHeaders) {
      res.writeHead(statusCode, /** @type {import('node:http').OutgoingHttpHeaders} */ (responseHeaders))
    },
    onResponseData(_controller, chunk) {
      res.write(chunk)
    },
    onResponseEnd() {
      res.end()
    },
    onResponseError() {
      res.destroy()
    },
  })
}).listen(Number(port), '127.0.0.1', () => process.send?.('ready'))
