// @ts-check
/**
 * Benchmark backend: /ping answers an 11-byte JSON body; /sink reads an upload and answers its size and SHA-256;
 * /stream?bytes=N answers N pattern bytes with backpressure. Run as its own process: `node bench/backend.mjs PORT`.
 */
import { createHash } from 'node:crypto'
import { createServer } from 'node:http'
import { writePattern } from '../dev/pattern.mjs'

if (!process.argv[2]) throw new Error('usage: node bench/backend.mjs PORT')
const PING = Buffer.from('{"ok":true}')

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://backend.local')
  if (url.pathname.endsWith('/sink')) {
    const hash = createHash('sha256')
    let bytes = 0
    req.on('data', (chunk) => {
      hash.update(chunk)
      bytes += chunk.length
    })
    req.on('end', () => {
      const body = JSON.stringify({ bytes, sha256: hash.digest('hex') })
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
      res.end(body)
    })
    return
  }
  if (url.pathname.endsWith('/stream')) return writePattern(res, Number(url.searchParams.get('bytes') ?? 0))
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': PING.length })
  res.end(PING)
})
server.keepAliveTimeout = 60_000
server.listen(Number(process.argv[2]), '127.0.0.1', () => process.send?.('ready'))
