// @ts-check
/** Comparison proxy: @fastify/http-proxy (undici) in front of the benchmark backend. `node bench/fastify-proxy.mjs PORT TARGET` */
import proxy from '@fastify/http-proxy'
import Fastify from 'fastify'

const app = Fastify({ logger: false })
await app.register(proxy, { upstream: process.argv[3] ?? 'http://127.0.0.1:4100', prefix: '/api', rewritePrefix: '' })
await app.listen({ port: Number(process.argv[2] ?? 4200), host: '127.0.0.1' })
process.send?.('ready')
