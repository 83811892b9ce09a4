// @ts-check
/** Comparison proxy: @fastify/http-proxy (undici) in front of the benchmark backend. `node bench/fastify-proxy.mjs PORT TARGET` */
import proxy from '@fastify/http-proxy'
import Fastify from 'fastify'

const [port, upstream] = process.argv.slice(2)
if (!port || !upstream) throw new Error('usage: node bench/fastify-proxy.mjs PORT TARGET')
const app = Fastify({ logger: false })
await app.register(proxy, { upstream, prefix: '/api', rewritePrefix: '' })
await app.listen({ port: Number(port), host: '127.0.0.1' })
process.send?.('ready')
