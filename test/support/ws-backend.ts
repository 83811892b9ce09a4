import { createHash } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { Writable } from 'node:stream'
import { createWebSocketStream, WebSocketServer, type WebSocket } from 'ws'
import { PATTERN_CHUNK, patternChunk } from '../../dev/pattern.mjs'

export interface Handshake {
  url: string
  headers: IncomingHttpHeaders
}

/**
 * A WebSocket backend (the `ws` package) for the tunnel tests. Every handshake is recorded. Paths:
 * `/echo` echoes every message; `/refuse` answers the handshake 401 with a JSON body (and tries to set the gateway's
 * session cookie); `/cookies` echoes like `/echo` and its 101 tries to set the gateway's session cookie beside one of
 * its own (`app=1`); `/flood?bytes=N` sends N pattern
 * bytes as 64 KiB binary messages, waiting for each to be handed to the socket, then closes; `/sink` reads what it is
 * sent slowly (2 ms a message) and records its length and SHA-256 in `sinks` when the client closes; `/hang` never
 * answers; `/quiet` answers 101 and then neither sends nor closes anything, even once the gateway has ended its side
 * (its raw socket, read and discarded, is in `quiet`). Plain HTTP: `/upload` reads the whole body and answers its
 * length and SHA-256; anything else is 404.
 */
export async function startWsBackend() {
  const handshakes: Handshake[] = []
  const sockets = new Set<WebSocket>()
  const sinks: { bytes: number, sha256: string }[] = []
  const quiet: Socket[] = []
  const wss = new WebSocketServer({ noServer: true })
  wss.on('headers', (headers, req) => {
    if (req.url?.endsWith('/cookies')) headers.push('Set-Cookie: svc_session=forged; Path=/', 'Set-Cookie: app=1; Path=/')
  })
  const server: Server = createServer((req, res) => {
    if (!req.url?.endsWith('/upload')) return void res.writeHead(404).end()
    const received = digest()
    req.on('data', (chunk: Buffer) => received.update(chunk))
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(received.result())))
  })
  // Upgraded sockets leave the HTTP server's bookkeeping (and are half-open): closed by hand at the end.
  const raw = new Set<Socket>()
  server.on('upgrade', (req, socket: Socket, head) => {
    raw.add(socket)
    socket.once('close', () => raw.delete(socket))
    socket.on('error', () => socket.destroy())
    handshakes.push({ url: req.url ?? '', headers: req.headers })
    const url = new URL(req.url ?? '/', 'http://ws.local')
    if (url.pathname.endsWith('/hang')) return
    if (url.pathname.endsWith('/quiet')) {
      quiet.push(socket)
      // Read, so that the gateway's FIN is seen (readableEnded); the server's sockets are half-open, so nothing closes.
      socket.resume()
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${acceptKey(String(req.headers['sec-websocket-key']))}\r\n\r\n`)
      return
    }
    if (url.pathname.endsWith('/refuse')) {
      const body = JSON.stringify({ message: 'Chưa đăng nhập.' })
      socket.end(`HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\nset-cookie: svc_session=forged; Path=/\r\nset-cookie: app=1; Path=/\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
      return
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws)
      ws.once('close', () => sockets.delete(ws))
      if (url.pathname.endsWith('/flood')) return void flood(ws, Number(url.searchParams.get('bytes') ?? 0))
      if (url.pathname.endsWith('/sink')) {
        const received = digest()
        const slow = new Writable({
          write(chunk: Buffer, _encoding, done) {
            received.update(chunk)
            setTimeout(done, 2)
          },
        })
        createWebSocketStream(ws).pipe(slow).on('finish', () => sinks.push(received.result()))
        return
      }
      ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }))
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    handshakes,
    sockets,
    sinks,
    quiet,
    close: () => {
      for (const ws of sockets) ws.terminate()
      for (const socket of raw) socket.destroy()
      server.closeAllConnections()
      return new Promise<void>(resolve => server.close(() => resolve()))
    },
  }
}

/** Sends `total` pattern bytes, one 64 KiB message at a time, each after the previous left (bounded memory here too). */
function flood(ws: WebSocket, total: number): void {
  let index = 0
  let sent = 0
  const next = () => {
    if (sent >= total) return void ws.close(1000, 'done')
    const part = Math.min(PATTERN_CHUNK, total - sent)
    const chunk = patternChunk(index++)
    sent += part
    ws.send(part === PATTERN_CHUNK ? chunk : chunk.subarray(0, part), { binary: true }, (error) => {
      if (!error) next()
    })
  }
  next()
}

/** The Sec-WebSocket-Accept answer to a handshake's Sec-WebSocket-Key (RFC 6455, section 4.2.2). */
function acceptKey(key: string): string {
  return createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64')
}

/** SHA-256 and length of what a consumer received. */
export function digest() {
  const hash = createHash('sha256')
  let bytes = 0
  return {
    update(chunk: Buffer) {
      hash.update(chunk)
      bytes += chunk.length
    },
    result: () => ({ bytes, sha256: hash.digest('hex') }),
  }
}
