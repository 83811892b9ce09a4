/**
 * The open WebSocket tunnels of /api/** (ws-tunnel.ts makes the handshake): two sockets joined, tracked for the
 * sweep that ends a tunnel with its session and for the shutdown.
 */
import type { Socket } from 'node:net'
import { liveToken, sessionExpiresAt, type SessionPayload } from '../core/session/seal'
import { onShutdown } from '../ops/drain'
import { useMetrics } from '../ops/metrics'
import { followIdle } from '../session/idle'
import { isSessionRevoked } from '../session/revocations'

/** Open tunnels are checked this often for a session that ended (8-hour end, token expiry, revocation). */
const SESSION_SWEEP_MS = 1_000
/** After a tunnel is ended (FIN both ways), it is destroyed if still open after this long. */
const END_GRACE_MS = 1_000

interface Tunnel {
  session: SessionPayload | null
  /** Whether its session went idle (APP_SESSION_IDLE_TIMEOUT) by the newest last-seen time this process met. */
  idle: (now: number) => boolean
  end: () => void
}

const tunnels = new Set<Tunnel>()
let sweeper: NodeJS.Timeout | undefined
/** A tunnel's client connection is probed this often when silent: a client gone without a word frees its slots. */
const KEEPALIVE_MS = 30_000

/**
 * A tunnel opened with a session ends with it: its 8-hour end, the token's expiry, a revocation, or its idle timeout
 * (messages through a tunnel are no activity: an unattended page's live feed must not keep its session).
 */
function sweepEndedSessions(): void {
  const now = Date.now()
  for (const tunnel of tunnels) {
    const { session } = tunnel
    // A contract-IAM token that expired ends the tunnel; mock and OpenID sessions keep no token in the cookie.
    if (session && (sessionExpiresAt(session) <= now || (session.accessToken !== undefined && !liveToken(session, now)) || tunnel.idle(now) || isSessionRevoked(session))) tunnel.end()
  }
}

/** Ends every open tunnel (FIN to both sides, destroyed a second later if still open): for the shutdown. */
export function endAllTunnels(): void {
  for (const tunnel of tunnels) tunnel.end()
}

onShutdown(endAllTunnels)

/** Tunnels open now. */
export function openTunnels(): number {
  return tunnels.size
}

/**
 * Joins the browser's and the backend's sockets; tracked for the session sweep and the shutdown. WebSockets have no
 * half-close: when either side ends (its FIN), the tunnel ends both ways at once and gives its slots back (`release`),
 * though the other side may never close its own (node:http's sockets are half-open); what either side sent before
 * its end is still delivered.
 */
export function joinSockets(client: Socket, clientHead: Buffer, backend: Socket, backendHead: Buffer, session: SessionPayload | null, release: () => void): void {
  for (const side of [client, backend]) {
    side.setTimeout(0)
    side.setNoDelay(true)
    side.setKeepAlive(true, KEEPALIVE_MS)
  }
  if (backendHead.length) client.write(backendHead)
  if (clientHead.length) backend.write(clientHead)
  client.pipe(backend, { end: false })
  backend.pipe(client, { end: false })
  const metrics = useMetrics()
  if (metrics) metrics.live.tunnels++
  let ending = false
  let grace: NodeJS.Timeout | undefined
  // FIN both ways, after what each side was already sent; what arrives from now on is read and dropped, so a side
  // that closes is seen closing. Cut a grace period later if still open.
  const end = () => {
    if (ending) return
    ending = true
    release()
    client.unpipe(backend)
    backend.unpipe(client)
    for (const side of [client, backend]) {
      side.resume()
      side.end()
    }
    grace = setTimeout(() => {
      client.destroy()
      backend.destroy()
    }, END_GRACE_MS).unref()
  }
  const idle = session ? followIdle(session) : undefined
  const tunnel: Tunnel = { session, idle: idle?.idle ?? (() => false), end }
  let open = 2
  const closed = () => {
    end()
    if (--open > 0) return
    clearTimeout(grace)
    idle?.stop()
    tunnels.delete(tunnel)
    if (metrics) metrics.live.tunnels--
    if (tunnels.size === 0 && sweeper) {
      clearInterval(sweeper)
      sweeper = undefined
    }
  }
  for (const side of [client, backend]) {
    side.once('end', end)
    side.once('close', closed)
    side.on('error', end)
  }
  tunnels.add(tunnel)
  sweeper ??= setInterval(sweepEndedSessions, SESSION_SWEEP_MS).unref()
}
