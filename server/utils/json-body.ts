import type { H3Event } from 'h3'
import { GatewayError, MESSAGES } from './gateway-error'

/** Largest body POST /auth/login and POST /auth/otp/send read. */
export const MAX_AUTH_BODY_BYTES = 64 * 1024

/**
 * Reads the request body as a JSON object, at most `limit` bytes (413 past that, before anything else happens).
 * Anything that is not a JSON object is null.
 */
export async function readJsonObject(event: H3Event, limit = MAX_AUTH_BODY_BYTES): Promise<Record<string, unknown> | null> {
  const req = event.node.req
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(event)
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > limit) throw tooLarge(event)
    chunks.push(chunk)
  }
  try {
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : null
  }
  catch {
    return null
  }
}

function tooLarge(event: H3Event): GatewayError {
  // The rest of the body is not read: close the connection once the answer is out.
  event.node.res.setHeader('connection', 'close')
  return new GatewayError(413, MESSAGES.bodyTooLarge)
}
