// @ts-check
/**
 * The soak's backend behind the gateways' /api/**: it answers only a request that carries a Bearer token (the gateway
 * sends one for a live session, none for a revoked one), so a revocation the gateway lost shows as a 200.
 * `GET /items` a small JSON list; `PUT /upload` reads the body and answers its length and SHA-256; `GET
 * /download?bytes=N` answers N pattern bytes (dev/pattern.mjs); WebSocket `/echo` echoes every message.
 * Fault knobs (`faults`): `reset` cuts every other upload and download mid-stream (the socket destroyed), `slowMs`
 * delays every answer and paces downloads. It counts its open connections and knows which are WebSocket tunnels
 * (by the gateway side's port), so the soak can tell the gateways' pooled connections from their tunnels.
 */
import { createHash } from 'node:crypto'
import { createServer } from 'node:http'
import { WebSocketServer } from 'ws'
import { PATTERN_CHUNK, patternChunk } from '../dev/pattern.mjs'

const ITEMS = Buffer.from(JSON.stringify({ items: Array.from({ length: 20 }, (_, i) => ({ id: i + 1, name: `Mục ${i + 1}` })) }))
/** A reset cuts a stream after this many bytes. */
const RESET_AFTER = 1024 * 1024

/** @param {{ port?: number }} [options] */
export async function startSoakBackend(options = {}) {
  const faults = { reset: false, slowMs: 0 }
  let streams = 0
  /** @type {Set<import('node:net').Socket>} */
  const connections = new Set()
  /** Ports (the gateway side's) of connections that became WebSocket tunnels. */
  const tunnelPorts = new Set()
  const cutThisOne = () => faults.reset && streams++ % 2 === 0
  const pause = () => new Promise(resolve => setTimeout(resolve, faults.slowMs))

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://backend.local')
    if (!/^Bearer \S+$/.test(req.headers.authorization ?? '')) {
      req.resume()
      return json(res, 401, { message: 'Chưa đăng nhập.' })
    }
    if (faults.slowMs) await pause()
    if (req.method === 'GET' && url.pathname === '/items') return json(res, 200, ITEMS)
    if (req.method === 'PUT' && url.pathname === '/upload') return readUpload(req, res, cutThisOne())
    if (req.method === 'GET' && url.pathname === '/download') {
      return writeDownload(res, Number(url.searchParams.get('bytes') ?? 0), { cut: cutThisOne(), paceMs: faults.slowMs ? 20 : 0 })
    }
    req.resume()
    json(res, 404, { message: 'Không tìm thấy.' })
  })
  server.requestTimeout = 0
  server.on('connection', (socket) => {
    connections.add(socket)
    socket.once('close', () => {
      connections.delete(socket)
      tunnelPorts.delete(socket.remotePort)
    })
  })

  const wss = new WebSocketServer({ noServer: true })
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => socket.destroy())
    if (!/^Bearer \S+$/.test(req.headers.authorization ?? '') || new URL(req.url ?? '/', 'http://backend.local').pathname !== '/echo') {
      return socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n')
    }
    tunnelPorts.add(socket.remotePort)
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('error', () => ws.terminate())
      ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }))
    })
  })

  await new Promise(resolve => server.listen(options.port ?? 0, '127.0.0.1', () => resolve(undefined)))
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    faults,
    /** Connections open now, and how many of them are WebSocket tunnels. */
    openConnections: () => ({ all: connections.size, tunnels: tunnelPorts.size }),
    /** Whether the connection from this (gateway side's) port is a tunnel. */
    isTunnelPort: (/** @type {number} */ remotePort) => tunnelPorts.has(remotePort),
    close: () => {
      for (const ws of wss.clients) ws.terminate()
      for (const socket of connections) socket.destroy()
      return new Promise(resolve => server.close(() => resolve(undefined)))
    },
  }
}

/**
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {Buffer | object} value
 */
function json(res, status, value) {
  const body = Buffer.isBuffer(value) ? value : Buffer.from(JSON.stringify(value))
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length })
  res.end(body)
}

/**
 * The upload's length and SHA-256; `cut`: the connection is destroyed once RESET_AFTER bytes have arrived.
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {boolean} cut
 */
function readUpload(req, res, cut) {
  const hash = createHash('sha256')
  let bytes = 0
  req.on('data', (chunk) => {
    hash.update(chunk)
    bytes += chunk.length
    if (cut && bytes >= RESET_AFTER) req.socket.destroy()
  })
  req.on('end', () => json(res, 200, { bytes, sha256: hash.digest('hex') }))
  req.on('error', () => {})
}

/**
 * `total` pattern bytes with backpressure; `cut`: the connection is destroyed after RESET_AFTER bytes; `paceMs`: a
 * pause between blocks (a slow backend).
 * @param {import('node:http').ServerResponse} res
 * @param {number} total
 * @param {{ cut: boolean, paceMs: number }} how
 */
function writeDownload(res, total, { cut, paceMs }) {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': total })
  let index = 0
  let sent = 0
  const pump = () => {
    while (sent < total && !res.destroyed) {
      if (cut && sent >= RESET_AFTER) return void res.socket?.destroy()
      const part = Math.min(PATTERN_CHUNK, total - sent)
      const chunk = patternChunk(index++)
      sent += part
      const more = res.write(part === PATTERN_CHUNK ? chunk : chunk.subarray(0, part))
      if (paceMs) return void setTimeout(() => (res.writableNeedDrain ? res.once('drain', pump) : pump()), paceMs)
      if (!more) return void res.once('drain', pump)
    }
    if (!res.destroyed) res.end()
  }
  pump()
}
