/**
 * Trace and span ids, for the SDK's spans (the provider's id generator) and for the requests not sampled (which the SDK
 * never sees): random hex cut from a pool of random bytes, hex-encoded in one call, several hundred ids at a time.
 */
import { randomFillSync } from 'node:crypto'
import type { IdGenerator } from '@opentelemetry/sdk-trace-base'

const POOL_BYTES = 8192
/** The pool, made at the first id (nothing with tracing off). */
let bytes: Buffer | undefined
let hex = ''
let at = 0
const ZERO = { 8: '0'.repeat(16), 16: '0'.repeat(32) }

/** `size` random bytes as lowercase hex, never all zero (W3C: an invalid id). */
export function randomHexId(size: 8 | 16): string {
  const length = size * 2
  if (at + length > hex.length) {
    bytes ??= Buffer.allocUnsafe(POOL_BYTES)
    randomFillSync(bytes)
    hex = bytes.toString('hex')
    at = 0
  }
  const id = hex.slice(at, at + length)
  at += length
  return id === ZERO[size] ? randomHexId(size) : id
}

/**
 * The provider's ids. A request's server span is sampled ahead of the SDK (spans.ts startRequestSpan) on a trace id
 * chosen here first: `withTraceId` hands that id to the SDK's next root span, so the span and the decision agree.
 */
export class RequestIds implements IdGenerator {
  private next: string | undefined

  generateTraceId(): string {
    const chosen = this.next
    this.next = undefined
    return chosen ?? randomHexId(16)
  }

  generateSpanId(): string {
    return randomHexId(8)
  }

  /** Runs `start` (a root span's start) with `traceId` as the trace id the SDK gets next; it is not kept after. */
  withTraceId<T>(traceId: string, start: () => T): T {
    this.next = traceId
    try {
      return start()
    }
    finally {
      this.next = undefined
    }
  }
}
