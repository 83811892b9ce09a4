import SonicBoom from 'sonic-boom'

/** What pino writes its lines to. */
export interface LineDestination {
  write: (line: string) => void
}

/** Lines wait at most this long before they are written... */
const FLUSH_MS = 50
/** ...or until this many characters are waiting. */
const FLUSH_CHARS = 64 * 1024

/**
 * stdout for pino's JSON lines, written by sonic-boom (pino's own asynchronous writer), with the lines of up to 50 ms
 * (or 64 KiB) joined into one write first. Measured on the 2-core bench machine: one write per line, or even one per
 * event-loop turn, cost the proxy a quarter of its throughput (sonic-boom measures its whole pending buffer on every
 * write, and every write is a hand-over to libuv's thread pool); a few writes a second cost next to nothing. Lines still
 * waiting are written synchronously when the process exits; a closed stdout (EPIPE) stops the logging, never the
 * process.
 */
export function batchedStdout(): LineDestination {
  const boom = new SonicBoom({ fd: 1, sync: false })
  let pending: string[] = []
  let pendingChars = 0
  let timer: NodeJS.Timeout | undefined
  let broken = false
  const flush = () => {
    clearTimeout(timer)
    timer = undefined
    if (!pending.length || broken) return
    const text = pending.join('')
    pending = []
    pendingChars = 0
    boom.write(text)
  }
  boom.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error
    broken = true
  })
  process.on('exit', () => {
    flush()
    if (broken) return
    try {
      boom.flushSync()
    }
    catch { /* stdout already gone */ }
  })
  return {
    write(line) {
      pending.push(line)
      pendingChars += line.length
      if (pendingChars >= FLUSH_CHARS) flush()
      else timer ??= setTimeout(flush, FLUSH_MS)
    },
  }
}
