import { pino } from 'pino'

/** What the logger writes its lines to. */
export interface LineDestination {
  write: (line: string) => void
  /** Writes what is waiting, synchronously (end of a drain, a fatal error). */
  flush: () => void
}

/** Lines are written once this many bytes wait... */
const MIN_BYTES = 32 * 1024
/** ...or at the latest after this long. */
const FLUSH_MS = 50
/** One write takes at most this many bytes. */
const MAX_WRITE = 256 * 1024

/**
 * The one buffer between the gateway's log and a file descriptor (stdout: 1): pino's own destination (sonic-boom),
 * asynchronous, writing once 32 KiB wait or every 50 ms. Measured on the 2-core bench machine: one write per line
 * cost the proxy a quarter of its throughput (each write is a hand-over to libuv's thread pool); a few writes a
 * second cost next to nothing. Lines are handed over as bytes (sonic-boom's 'buffer' mode): in its text mode it
 * measures the pending text on every line. pino's destination writes what waits synchronously when the process
 * exits, and a closed stdout (EPIPE) stops the logging, never the process.
 */
export function lineDestination(fd: number): LineDestination {
  const boom = pino.destination({ dest: fd, sync: false, minLength: MIN_BYTES, maxWrite: MAX_WRITE, periodicFlush: FLUSH_MS, contentMode: 'buffer' })
  // In 'buffer' mode sonic-boom takes Buffers (its README); its type still names only strings. Looked up at each call:
  // on EPIPE pino replaces the destination's write with a no-op, and a bound copy would keep queueing forever.
  const target = boom as unknown as { write: (bytes: Buffer) => boolean }
  return {
    write: line => void target.write(Buffer.from(line)),
    flush() {
      try {
        boom.flushSync()
      }
      catch { /* stdout already gone, or a write still in progress: the exit handler writes the rest */ }
    },
  }
}
