// @ts-check
/**
 * Comparison proxy: h3's `proxyRequest` as h3 documents it for proxying, in a plain h3 app (`createApp`,
 * `app.use('/api', eventHandler(event => proxyRequest(event, target)))`, `toNodeListener` under node:http), its fetch
 * given through h3's own `fetch` option: undici's, the version and keep-alive pool the floor and @fastify/http-proxy
 * use (Node 20's built-in fetch is an older undici). `node bench/h3-proxy.mjs PORT TARGET`
 */
import { createServer } from 'node:http'
import { createApp, eventHandler, proxyRequest, toNodeListener } from 'h3'
import { Agent, fetch } from 'undici'

const [port, upstream] = process.argv.slice(2)
if (!port || !upstream) throw new Error('usage: node bench/h3-proxy.mjs PORT TARGET')
const dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: 256 })
const app = createApp()
// Under app.use('/api'), event.path is what follows /api: /api/ping reaches the backend as /ping, as with the others.
app.use('/api', eventHandler(event => proxyRequest(event, `${upstream}${event.path}`, {
  fetch: /** @type {typeof globalThis.fetch} */ (/** @type {unknown} */ (fetch)),
  fetchOptions: /** @type {RequestInit} */ ({ dispatcher }),
})))
createServer(toNodeListener(app)).listen(Number(port), '127.0.0.1')
