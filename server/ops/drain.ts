/**
 * The drain's state, shared by whatever serves work: requests and tunnels count themselves in, /readyz and the
 * answers read whether the drain has begun. The drain itself (signals, closing the server, the time limit, the exit)
 * is the gateway's server's (server/node-server.ts).
 */

/** Requests and tunnels in progress. */
let inFlight = 0
let draining = false
let onIdle: (() => void) | undefined
/** What else ends when the drain begins (the WebSocket tunnels). */
const drainListeners: (() => void)[] = []

/** Runs `listener` when the drain begins (once). */
export function onShutdown(listener: () => void): void {
  drainListeners.push(listener)
}

/** Whether the drain has begun: /readyz answers 503, answers carry `Connection: close`. */
export function isShuttingDown(): boolean {
  return draining
}

/** Work in progress now (requests, tunnels, unwritten revocations). */
export function workInFlight(): number {
  return inFlight
}

/** Counts one request (or tunnel) in progress; call the returned function exactly once when it ends. */
export function workStarted(): () => void {
  inFlight++
  let ended = false
  return () => {
    if (ended) return
    ended = true
    inFlight--
    // A moment for the last answer's bytes to leave before the process does.
    if (draining && inFlight === 0) setTimeout(() => onIdle?.(), 50)
  }
}

/**
 * Begins the drain: from now on /readyz answers 503 and every answer closes its connection; the drain listeners run
 * (tunnels end). `idle` runs once no work is left in progress (at once when there is none).
 */
export function beginDrain(idle: () => void): void {
  draining = true
  onIdle = idle
  for (const listener of drainListeners) listener()
  if (inFlight === 0) idle()
}
