import { createHash } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { PATTERN_CHUNK, patternChunk, writePattern } from '../../dev/pattern.mjs'

export interface EchoedRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  bodyBytes: number
  bodySha256: string
  body: string
}

/**
 * A backend that echoes what it received as JSON (method, raw url, headers, body size and hash, the body when small).
 * `/stream?bytes=N` answers N pattern bytes; `/hang` never answers; `/status/<code>` answers that status;
 * `/cookies` answers with two Set-Cookie headers; `/gateway-cookies` tries to set the gateway's own cookies (and a nameless one);
 * `/early-hints` sends a 103 Early Hints answer before the final one; `/slow-stream?seconds=S` answers one 64 KiB
 * pattern block every 100 ms for S seconds; `/reset-upload` cuts the connection once the first bytes of a body arrive;
 * `/answer-first` answers 200 and a first line at once, and ends when the request body ends; `/slow-read?ms=N` reads
 * nothing of the body for N ms (the gateway's writes back up), then echoes it.
 */
export async function startEchoBackend() {
  const received: EchoedRequest[] = []
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://echo.local')
    if (url.pathname.endsWith('/hang')) return
    if (url.pathname.endsWith('/stream')) return writePattern(res, Number(url.searchParams.get('bytes') ?? 0))
    if (url.pathname.endsWith('/slow-stream')) return writeSlowly(res, Number(url.searchParams.get('seconds') ?? 1))
    if (url.pathname.endsWith('/reset-upload')) return void req.once('data', () => req.socket.destroy())
    if (url.pathname.endsWith('/answer-first')) {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.write('answered before the body\n')
      req.resume()
      return void req.once('end', () => res.end())
    }
    if (url.pathname.endsWith('/slow-read')) {
      req.pause()
      setTimeout(() => req.resume(), Number(url.searchParams.get('ms') ?? 0))
    }
    const hash = createHash('sha256')
    let bytes = 0
    const kept: Buffer[] = []
    req.on('data', (chunk: Buffer) => {
      hash.update(chunk)
      bytes += chunk.length
      if (bytes <= 64 * 1024) kept.push(chunk)
    })
    req.on('end', () => {
      const echoed: EchoedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        bodyBytes: bytes,
        bodySha256: hash.digest('hex'),
        body: bytes <= 64 * 1024 ? Buffer.concat(kept).toString('utf8') : '',
      }
      received.push(echoed)
      const status = Number(/\/status\/(\d{3})$/.exec(url.pathname)?.[1] ?? 200)
      const headers: Record<string, string | string[]> = { 'content-type': 'application/json', 'x-backend': 'echo' }
      if (url.pathname.endsWith('/cookies')) headers['set-cookie'] = ['a=1; Path=/', 'b=2; Path=/']
      if (url.pathname.endsWith('/gateway-cookies')) headers['set-cookie'] = ['svc_session=v1.forged.by.backend; Path=/', 'kept=1; Path=/', 'svc_device=planted; Path=/', '=svc_session=nameless; Path=/']
      if (url.pathname.endsWith('/early-hints')) res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' })
      res.writeHead(status, 'Echo Reason', headers)
      res.end(JSON.stringify(echoed))
    })
  })
  // A backend as patient as the gateway: Node's default would cut an upload at 300 s with its own 408.
  server.requestTimeout = 0
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => {
      const closed = new Promise<void>(resolve => server.close(() => resolve()))
      server.closeAllConnections()
      return closed
    },
  }
}

/** 64 KiB pattern blocks, one every 100 ms, for `seconds`: a download that lasts. */
function writeSlowly(res: ServerResponse, seconds: number): void {
  const blocks = Math.round(seconds * 10)
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': blocks * PATTERN_CHUNK })
  let index = 0
  const timer = setInterval(() => {
    res.write(patternChunk(index++))
    if (index === blocks) {
      clearInterval(timer)
      res.end()
    }
  }, 100)
  res.once('close', () => clearInterval(timer))
}
