import { createHash } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface EchoedRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  bodyBytes: number
  bodySha256: string
  body: string
}

/** Deterministic bytes for streaming tests: block i of 64 KiB is filled with (i % 251). */
export function patternChunk(index: number, size = 64 * 1024): Buffer {
  return Buffer.alloc(size, index % 251)
}

/** The SHA-256 of `total` bytes of the pattern. */
export function patternSha256(total: number, size = 64 * 1024): string {
  const hash = createHash('sha256')
  for (let i = 0, sent = 0; sent < total; i++) {
    const chunk = patternChunk(i, size)
    const part = Math.min(size, total - sent)
    hash.update(part === size ? chunk : chunk.subarray(0, part))
    sent += part
  }
  return hash.digest('hex')
}

/**
 * A backend that echoes what it received as JSON (method, raw url, headers, body size and hash, the body when small).
 * `/stream?bytes=N` answers N pattern bytes; `/hang` never answers; `/status/<code>` answers that status;
 * `/cookies` answers with two Set-Cookie headers.
 */
export async function startEchoBackend() {
  const received: EchoedRequest[] = []
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://echo.local')
    if (url.pathname.endsWith('/hang')) return
    if (url.pathname.endsWith('/stream')) {
      const total = Number(url.searchParams.get('bytes') ?? 0)
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': total })
      let index = 0
      let sent = 0
      const pump = () => {
        while (sent < total) {
          const part = Math.min(64 * 1024, total - sent)
          const chunk = patternChunk(index++)
          sent += part
          if (!res.write(part === chunk.length ? chunk : chunk.subarray(0, part))) return void res.once('drain', pump)
        }
        res.end()
      }
      return pump()
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
      res.writeHead(status, 'Echo Reason', headers)
      res.end(JSON.stringify(echoed))
    })
  })
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
