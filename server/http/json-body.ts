import type { IncomingMessage } from 'node:http'
import type { H3Event } from 'h3'
import { useGatewayConfig } from '../ops/config'
import { MESSAGES, RequestError } from './errors'

/** Largest body POST /auth/login and POST /auth/otp/send read. */
export const MAX_AUTH_BODY_BYTES = 64 * 1024
/** After a 413, this much more is read and dropped so the client can finish sending and read the answer. */
const MAX_DISCARD_BYTES = 16 * 1024 * 1024

/** `application/json`, parameters (charset) allowed; anything else, a missing type included, is not JSON. */
export function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false
  const type = value.split(';')[0]!.trim().toLowerCase()
  return type === 'application/json'
}

/**
 * Reads the request body as a JSON object: only `Content-Type: application/json` (415 otherwise, so a plain HTML form
 * can never log anyone in), at most `limit` bytes (413 past that), all of it within APP_AUTH_BODY_TIMEOUT seconds
 * of the headers (10 by default; 408, and the connection closes). Each check comes before anything else happens.
 * Anything that is not a JSON object is null.
 */
export function readJsonObject(event: H3Event, limit = MAX_AUTH_BODY_BYTES): Promise<Record<string, unknown> | null> {
  const req = event.node.req
  if (!isJsonContentType(req.headers['content-type'])) {
    discard(req, 0)
    return Promise.reject(new RequestError(415, MESSAGES.notJson))
  }
  return readLimitedText(event, limit).then(parseObject)
}

/**
 * Reads an `application/x-www-form-urlencoded` body (the provider's back-channel logout) with the same limits: its
 * fields, or a RequestError (415 for another type, 413, 408).
 */
export function readFormFields(event: H3Event, limit = MAX_AUTH_BODY_BYTES): Promise<URLSearchParams> {
  const req = event.node.req
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()
  if (type !== 'application/x-www-form-urlencoded') {
    discard(req, 0)
    return Promise.reject(new RequestError(415, MESSAGES.notForm))
  }
  return readLimitedText(event, limit).then(text => new URLSearchParams(text))
}

/** The body as text: at most `limit` bytes (413), within APP_AUTH_BODY_TIMEOUT seconds of the headers (408). */
function readLimitedText(event: H3Event, limit: number): Promise<string> {
  const req = event.node.req
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > limit) {
    discard(req, 0)
    return Promise.reject(new RequestError(413, MESSAGES.bodyTooLarge))
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const stop = () => {
      clearTimeout(timer)
      req.off('data', onData)
      req.off('end', onEnd)
    }
    const timer = setTimeout(() => {
      stop()
      req.resume()
      reject(new RequestError(408, MESSAGES.bodyTimeout, { connection: 'close' }))
    }, useGatewayConfig().config.authBodyTimeoutSeconds * 1000)
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= limit) return void chunks.push(chunk)
      stop()
      discard(req, size)
      reject(new RequestError(413, MESSAGES.bodyTooLarge))
    }
    const onEnd = () => {
      stop()
      resolve(Buffer.concat(chunks).toString('utf8'))
    }
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', (error) => {
      stop()
      reject(error)
    })
  })
}

/** Drops the rest of an oversized body (bounded), so the 413 reaches a client that is still sending. */
function discard(req: IncomingMessage, alreadyRead: number): void {
  let dropped = alreadyRead
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length
    if (dropped > MAX_DISCARD_BYTES) req.socket.destroy()
  })
  req.resume()
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text)
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : null
  }
  catch {
    return null
  }
}
