import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import { useLogger } from './logger'
import { rememberServer } from './shutdown'

/** Request headers must arrive within this time. */
const HEADERS_TIMEOUT_MS = 60_000
const configured = new WeakSet<object>()

interface TimeoutSettings {
  requestTimeout: number
  headersTimeout: number
}

/**
 * Sets the Node server's time limits once, from its first request (Nitro creates the server; a plugin never sees it):
 * no total-time cap on a request, so an upload through /api runs as long as bytes move (Node's default cuts it at
 * 300 s), and 60 s for the headers. /auth bodies have their own limit (APP_AUTH_BODY_TIMEOUT, json-body.ts). The
 * limits the server then holds are logged once, read back from it. The server is remembered for the graceful
 * shutdown.
 */
export function applyServerTimeouts(socket: Socket): void {
  const server = (socket as Socket & { server?: Partial<TimeoutSettings> }).server
  if (!server || configured.has(server) || typeof server.requestTimeout !== 'number') return
  configured.add(server)
  rememberServer(server as Server)
  server.requestTimeout = 0
  server.headersTimeout = HEADERS_TIMEOUT_MS
  const { requestTimeout, headersTimeout, keepAliveTimeout } = server as Server
  useLogger().info({ type: 'server', requestTimeout, headersTimeout, keepAliveTimeout }, 'giới hạn thời gian của máy chủ HTTP (ms, 0: không giới hạn)')
}
