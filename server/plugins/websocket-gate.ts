import { subscribe } from 'node:diagnostics_channel'
import { Server } from 'node:http'
import type { Socket } from 'node:net'
import { defineNitroPlugin } from 'nitropack/runtime'
import { isMetricsServer } from '../utils/metrics-listener'
import { useRouteDecider } from '../utils/route-decider'
import { rememberServer } from '../utils/shutdown'
import { handleUpgrade } from '../utils/ws-tunnel'

const adopted = new WeakSet<Server>()

/**
 * WebSocket handshakes under /api/** (utils/ws-tunnel.ts). Nitro creates the HTTP server after the plugins and hands
 * them no handle on it, and a server without an 'upgrade' listener serves a handshake as a plain GET. Node announces
 * every accepted connection on the `net.server.socket` diagnostics channel before it reads a byte of it: the first
 * connection of a server gives the server, which then gets the 'upgrade' listener (and is remembered for the graceful
 * shutdown).
 */
export default defineNitroPlugin(() => {
  const decide = useRouteDecider()
  subscribe('net.server.socket', (message) => {
    const server = (message as { socket: Socket & { server?: unknown } }).socket.server
    if (!(server instanceof Server) || adopted.has(server) || isMetricsServer(server)) return
    adopted.add(server)
    rememberServer(server)
    server.on('upgrade', (req, socket: Socket, head: Buffer) => handleUpgrade(req, socket, head, decide))
  })
})
