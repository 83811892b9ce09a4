import type { Server } from 'node:http'
import type { NitroApp } from 'nitropack/types'
import type { Logger } from './logger'

/** Servers seen through their requests (Nitro creates the server; a plugin never gets it). */
const servers = new Set<Server>()
/** Requests and tunnels in progress. */
let inFlight = 0
let draining = false
let onIdle: (() => void) | undefined
/** What else ends when SIGTERM arrives (the WebSocket tunnels). */
const shutdownListeners: (() => void)[] = []

/** Runs `listener` when SIGTERM arrives (once). */
export function onShutdown(listener: () => void): void {
  shutdownListeners.push(listener)
}

/** Remembers the server a request came through, so that SIGTERM can stop it accepting. */
export function rememberServer(server: Server | undefined): void {
  if (server && !servers.has(server)) servers.add(server)
}

/** Whether SIGTERM has arrived: /readyz answers 503, answers carry `Connection: close`. */
export function isShuttingDown(): boolean {
  return draining
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
 * Graceful shutdown, in place of Nitro's (which closes idle connections but has no readiness state): on SIGTERM or
 * SIGINT the servers stop accepting, /readyz answers 503, in-flight requests and streams finish for up to
 * `timeoutSeconds`, then the app's 'close' hooks run and the process exits 0. A second signal, or the timeout, ends it
 * at once. Outside the node-server preset's production server (nuxt dev), nothing is installed.
 */
export function installShutdown(nitroApp: NitroApp, timeoutSeconds: number, log: Logger): void {
  // Read by the node-server entry right after the plugins: Nitro's own handler stays out of the way.
  process.env.NITRO_SHUTDOWN_DISABLED = '1'
  let exiting = false
  const exit = async (reason: string) => {
    if (exiting) return
    exiting = true
    if (inFlight > 0) log.warn({ inFlight, reason }, `dừng: cắt ${inFlight} yêu cầu còn dở (${reason}).`)
    else log.info({ reason }, 'dừng: mọi yêu cầu đã xong.')
    // The app's and the gateway's 'close' hooks (Redis connections, metrics listener), bounded.
    await Promise.race([nitroApp.hooks.callHook('close'), new Promise(resolve => setTimeout(resolve, 2_000).unref())]).catch(() => {})
    process.exit(0)
  }
  const onSignal = (signal: NodeJS.Signals) => {
    if (draining) return void exit(`${signal} lần hai`)
    draining = true
    log.info({ signal, inFlight, timeoutSeconds }, `nhận ${signal}: ngừng nhận kết nối, chờ ${inFlight} yêu cầu còn dở tối đa ${timeoutSeconds} giây.`)
    for (const server of servers) {
      server.close()
      server.closeIdleConnections()
    }
    for (const listener of shutdownListeners) listener()
    // Keep-alive connections that go idle during the drain are closed as they do.
    setInterval(() => {
      for (const server of servers) server.closeIdleConnections()
    }, 250).unref()
    setTimeout(() => void exit('hết thời gian'), timeoutSeconds * 1000).unref()
    onIdle = () => void exit('xong')
    if (inFlight === 0) onIdle()
  }
  process.on('SIGTERM', onSignal)
  process.on('SIGINT', onSignal)
}
