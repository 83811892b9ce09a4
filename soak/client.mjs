// @ts-check
/**
 * The soak's client side: one HTTP exchange with a gateway (node:http, keep-alive), streaming pattern bytes up with
 * backpressure and hashing what comes down, optionally aborting an upload half-way or reading slowly; and one
 * WebSocket tunnel that echoes random messages and compares every echo. Neither ever throws: each says what happened.
 */
import { createHash, randomBytes } from 'node:crypto'
import { Agent, request as httpRequest } from 'node:http'
import { WebSocket } from 'ws'
import { PATTERN_CHUNK, patternChunk } from '../dev/pattern.mjs'

/** No exchange of the soak may take longer than this (a hung one is an error, not a stall of the soak). */
const EXCHANGE_LIMIT_MS = 60_000
/** The longest a connection waits idle in the soak's pool (Node's own global agent keeps them 5 s). */
const IDLE_LIMIT_MS = 5_000
/** When each pooled connection last finished an answer: how long a reused one had been idle. */
const idleSince = new WeakMap()

/**
 * The soak's connections to one gateway, kept alive as a well-made client keeps them: an idle one is dropped before
 * the server drops it. Node's Agent follows the server's `Keep-Alive: timeout=N` (dropping at N − 1 s) only when it
 * has a `timeout` of its own; without one it keeps idle connections for ever, and sooner or later sends a request on
 * one just as the server closes it: ECONNRESET on a request the server never saw (the keep-alive race, issue 37).
 */
export function keepAliveAgent() {
  return new Agent({ keepAlive: true, maxSockets: 32, timeout: IDLE_LIMIT_MS })
}

/**
 * @typedef {object} Exchange what one HTTP exchange gave
 * @property {number} [status] the answer's status, when one came
 * @property {Record<string, string | string[] | undefined>} [headers]
 * @property {Buffer} [body] the answer's body (unless hashed)
 * @property {{ bytes: number, sha256: string }} [received] length and SHA-256 of the body (`hash`)
 * @property {boolean} complete the whole answer arrived
 * @property {string} [error] a network error code, 'premature-close', 'client-abort', 'client-timeout'
 * @property {number} sent request body bytes written
 * @property {boolean} connected the request's connection was open (a new one connected, or a kept-alive one)
 * @property {number} [reusedAfterMs] the request went on a kept-alive connection idle this long
 */

/**
 * One exchange with a gateway. `body`: a small body; `upload`: that many pattern bytes as the body, cut by the
 * client (the socket destroyed) after `abortAfter` bytes; `hash`: the answer's body is hashed, not kept;
 * `readBytesPerSecond`: a slow reader.
 * @param {{ url: string, agent: import('node:http').Agent, method?: string, headers?: Record<string, string>, body?: Buffer,
 *   upload?: number, abortAfter?: number, hash?: boolean, readBytesPerSecond?: number }} options
 * @returns {Promise<Exchange>}
 */
export function exchange({ url, agent, method = 'GET', headers = {}, body, upload, abortAfter, hash, readBytesPerSecond }) {
  return new Promise((resolve) => {
    /** @type {Exchange} */
    const result = { complete: false, sent: 0, connected: false }
    let done = false
    const finish = (/** @type {string | undefined} */ error) => {
      if (done) return
      done = true
      clearTimeout(limit)
      if (error) result.error = error
      resolve(result)
    }
    const length = body?.length ?? upload
    const req = httpRequest(url, { method, agent, headers: length === undefined ? headers : { ...headers, 'content-length': String(length) } })
    const limit = setTimeout(() => {
      req.destroy()
      finish('client-timeout')
    }, EXCHANGE_LIMIT_MS)
    req.once('socket', (socket) => {
      if (req.reusedSocket) result.reusedAfterMs = Date.now() - idleSince.get(socket)
      req.once('response', res => res.once('end', () => idleSince.set(socket, Date.now())))
      if (!socket.connecting) result.connected = true
      else socket.once('connect', () => (result.connected = true))
    })
    req.on('error', error => finish(/** @type {NodeJS.ErrnoException} */ (error).code ?? error.message))
    req.on('response', (res) => {
      result.status = res.statusCode
      result.headers = res.headers
      const digest = hash ? createHash('sha256') : undefined
      const chunks = /** @type {Buffer[]} */ ([])
      let bytes = 0
      res.on('data', (/** @type {Buffer} */ chunk) => {
        bytes += chunk.length
        if (digest) digest.update(chunk)
        else chunks.push(chunk)
        if (readBytesPerSecond) {
          res.pause()
          setTimeout(() => res.resume(), (chunk.length / readBytesPerSecond) * 1000)
        }
      })
      res.on('end', () => {
        result.complete = res.complete
        if (digest) result.received = { bytes, sha256: digest.digest('hex') }
        else result.body = Buffer.concat(chunks)
        finish(res.complete ? undefined : 'premature-close')
      })
      res.on('error', () => finish('premature-close'))
      res.on('close', () => finish('premature-close'))
    })
    if (upload === undefined) {
      result.sent = body?.length ?? 0
      return void req.end(body)
    }
    writePattern(req, upload, abortAfter, result).then((cut) => {
      if (cut) finish('client-abort')
    })
  })
}

/**
 * Writes `total` pattern bytes on a request, waiting for each block to drain; destroys the request once `abortAfter`
 * bytes are out. Resolves true when it cut the request.
 * @param {import('node:http').ClientRequest} req
 * @param {number} total
 * @param {number | undefined} abortAfter
 * @param {Exchange} result counts what was sent
 */
async function writePattern(req, total, abortAfter, result) {
  for (let index = 0; result.sent < total; index++) {
    if (req.destroyed) return false
    if (abortAfter !== undefined && result.sent >= abortAfter) {
      req.destroy()
      return true
    }
    const part = Math.min(PATTERN_CHUNK, total - result.sent)
    const chunk = patternChunk(index)
    result.sent += part
    if (!req.write(part === PATTERN_CHUNK ? chunk : chunk.subarray(0, part))) await drained(req)
  }
  req.end()
  return false
}

/** Resolves on the request's next 'drain', or its 'close' (both listeners removed then). */
function drained(/** @type {import('node:http').ClientRequest} */ req) {
  return new Promise((resolve) => {
    const done = () => {
      req.off('drain', done).off('close', done)
      resolve(undefined)
    }
    req.on('drain', done).on('close', done)
  })
}

/**
 * @typedef {object} TunnelRun what one tunnel gave
 * @property {number} [status] the handshake's answer (101 when it opened)
 * @property {string} [error] how it failed: 'handshake <status>', 'closed <code>' (closed by the other side), 'mismatch'
 * @property {number} sent bytes sent
 * @property {number} echoed bytes echoed back and equal to what was sent
 */

/**
 * Opens a tunnel through a gateway, sends a random `messageBytes` message every `everyMs` for `seconds`, compares each
 * echo with what was sent, then closes it (code 1000) once every echo came back.
 * @param {{ url: string, headers: Record<string, string>, seconds: number, everyMs?: number, messageBytes?: number }} options
 * @returns {Promise<TunnelRun>}
 */
export function tunnel({ url, headers, seconds, everyMs = 200, messageBytes = 16 * 1024 }) {
  return new Promise((resolve) => {
    /** @type {TunnelRun} */
    const run = { sent: 0, echoed: 0 }
    /** @type {Buffer[]} */
    const waiting = []
    let closing = false
    let timer
    const ws = new WebSocket(url, { headers, perMessageDeflate: false, handshakeTimeout: 10_000 })
    const end = (/** @type {string | undefined} */ error) => {
      clearInterval(timer)
      if (error && !run.error) run.error = error
      if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.terminate()
    }
    ws.on('unexpected-response', (_req, res) => {
      run.status = res.statusCode
      res.resume()
      end(`handshake ${res.statusCode}`)
    })
    ws.on('upgrade', (res) => {
      run.status = res.statusCode
    })
    ws.on('open', () => {
      const stopAt = Date.now() + seconds * 1000
      timer = setInterval(() => {
        if (Date.now() >= stopAt) {
          clearInterval(timer)
          closing = true
          if (!waiting.length) ws.close(1000)
          return
        }
        const message = randomBytes(messageBytes)
        waiting.push(message)
        run.sent += message.length
        ws.send(message)
      }, everyMs)
    })
    ws.on('message', (/** @type {Buffer} */ data) => {
      const expected = waiting.shift()
      if (!expected || !expected.equals(data)) return end('mismatch')
      run.echoed += data.length
      if (closing && !waiting.length) ws.close(1000)
    })
    ws.on('error', error => end(/** @type {NodeJS.ErrnoException} */ (error).code ?? error.message))
    ws.on('close', (code) => {
      clearInterval(timer)
      if (!(closing && code === 1000 && !waiting.length) && !run.error) run.error = `closed ${code}`
      resolve(run)
    })
  })
}
