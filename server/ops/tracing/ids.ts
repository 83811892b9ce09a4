/**
 * Trace and span ids, for every span of the request thread (recorder.ts), sampled or not: random hex cut from a pool
 * of random bytes, hex-encoded in one call, several hundred ids at a time.
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

/** The recorder's ids (recorder.ts): a trace id for each root span, a span id for every span. */
export class RequestIds implements IdGenerator {
  generateTraceId(): string {
    return randomHexId(16)
  }

  generateSpanId(): string {
    return randomHexId(8)
  }
}
