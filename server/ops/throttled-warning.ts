import { useLogger } from './logger'

/**
 * A warning said at most once per period (a Redis outage or a misbehaving backend would otherwise fill the log with
 * the same line); the lines in between are dropped.
 */
export function throttledWarning(periodMs = 60_000): (message: string) => void {
  let last = -Infinity
  return (message) => {
    const now = Date.now()
    if (now - last < periodMs) return
    last = now
    useLogger().warn(message)
  }
}
