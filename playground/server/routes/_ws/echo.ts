/**
 * A WebSocket route of the app itself, outside /api (Nitro's WebSocket support, turned on in nuxt.config.ts): the
 * gateway's server hands it the handshakes that are not the /api/** tunnel's.
 */
export default defineWebSocketHandler({
  message(peer, message) {
    peer.send(`playground: ${message.text()}`)
  },
})
