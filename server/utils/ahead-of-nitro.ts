import type { IncomingMessage, Server, ServerResponse } from 'node:http'

/** Serves a request and says so (true), or leaves it to Nitro (false) without having answered it. Never throws. */
export type AheadOfNitro = (req: IncomingMessage, res: ServerResponse) => boolean

const taken = new WeakSet<Server>()

/**
 * Puts `serve` in front of Nitro's own 'request' listener on a Node server (Nitro creates the server after the
 * plugins, so this runs from the server's first request): what `serve` answers skips h3's event, its async handler
 * and its promise (1.5–4% of a proxied request, head to head), and everything else reaches Nitro as before. A server
 * with any other 'request' listener (an app's own) is left as it is. Once per server.
 */
export function serveAheadOfNitro(server: Server | undefined, serve: AheadOfNitro): void {
  if (!server || taken.has(server)) return
  taken.add(server)
  const listeners = server.listeners('request')
  if (listeners.length !== 1) return
  const nitroListener = listeners[0] as (req: IncomingMessage, res: ServerResponse) => void
  server.removeListener('request', nitroListener)
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!serve(req, res)) nitroListener(req, res)
  })
}
