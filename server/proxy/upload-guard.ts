import type { IncomingMessage } from 'node:http'
import { OpenSlots } from '../core/proxy/open-slots'

/**
 * Request bodies through the /api proxy hold a backend connection while they arrive, so a client that starts uploads
 * and then sends nothing could hold every connection. Two rules: at most APP_API_UPLOADS_PER_CLIENT bodies in flight
 * per client address (counted as the brute-force limits count it: IPv6 by its /64), from the request's arrival until
 * its body is in or its exchange ends; and a body that sends no byte for APP_API_BODY_IDLE_TIMEOUT seconds while the
 * backend waits for one is cut. An upload that keeps moving runs as long as it moves.
 */
const inFlight = new OpenSlots()

/** A body slot for the client address (its release function), or undefined when it has `limit` in flight (0: no limit). */
export function takeUploadSlot(address: string, limit: number): (() => void) | undefined {
  return inFlight.take([[address, limit]])
}

/** Why an upload was cut: no byte for the idle limit. */
export class BodyIdleError extends Error {
  readonly code = 'SVC_BODY_IDLE'
  constructor() {
    super('request body idle')
  }
}

/**
 * The request body as an async iterable for undici (which awaits the backend socket's drain: backpressure holds),
 * calling `onIdle` once the client has sent nothing for `idleMs` while undici waits for its next chunk. Only those
 * waits count: a backend that reads slowly never makes an upload idle. Never Node's request object itself: undici
 * sets a destroyed IncomingMessage's `socket` to null, and Nitro's shutdown tracking then throws on every proxied
 * body. Stopping early leaves the request alive for the answer.
 */
export async function* idleLimitedBody(req: IncomingMessage, idleMs: number, onIdle: () => void): AsyncGenerator<Buffer> {
  let waiting = true
  const timer = setTimeout(() => waiting && onIdle(), idleMs)
  try {
    for await (const chunk of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      waiting = false
      yield chunk
      waiting = true
      timer.refresh()
    }
  }
  finally {
    clearTimeout(timer)
  }
}
