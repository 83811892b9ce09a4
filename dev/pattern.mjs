// @ts-check
/** Deterministic bytes for streaming tests and benchmarks: block i of 64 KiB is filled with (i % 251). */
import { createHash } from 'node:crypto'

export const PATTERN_CHUNK = 64 * 1024

/** Block `index` of the pattern. */
export function patternChunk(index) {
  return Buffer.alloc(PATTERN_CHUNK, index % 251)
}

/** The SHA-256 of the first `total` bytes of the pattern. */
export function patternSha256(total) {
  const hash = createHash('sha256')
  for (let i = 0, sent = 0; sent < total; i++, sent += PATTERN_CHUNK) {
    hash.update(patternChunk(i).subarray(0, Math.min(PATTERN_CHUNK, total - sent)))
  }
  return hash.digest('hex')
}

/**
 * Answers `total` pattern bytes on an HTTP response, honouring backpressure.
 * @param {import('node:http').ServerResponse} res
 * @param {number} total
 */
export function writePattern(res, total) {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': total })
  let index = 0
  let sent = 0
  const pump = () => {
    while (sent < total) {
      const part = Math.min(PATTERN_CHUNK, total - sent)
      const chunk = patternChunk(index++)
      sent += part
      if (!res.write(part === PATTERN_CHUNK ? chunk : chunk.subarray(0, part))) return void res.once('drain', pump)
    }
    res.end()
  }
  pump()
}
