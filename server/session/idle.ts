/**
 * The idle timeout's live part (APP_SESSION_IDLE_TIMEOUT; the rules are core/session/idle.ts's): a request's session
 * re-sealed with a new last-seen time when a quarter of the window has passed (the proxy, the tunnel and forward auth
 * call resealLines; session/cookie.ts's slideNitroSession does it for what Nitro serves), and the newest last-seen
 * time this process has met for the sessions of its open WebSocket tunnels.
 */
import { fitSessionToBudget } from '../core/session/budget'
import { serializeCookie, SESSION_COOKIE } from '../core/session/cookie'
import { idleHintCookie, isIdle, lastSeen, resealDue } from '../core/session/idle'
import { sealSession, sessionEndsAt, type SessionPayload } from '../core/session/seal'
import { useGatewayConfig } from '../ops/config'

/** Secure everywhere but under `nuxt dev` (as session/cookie.ts's). */
const secure = !import.meta.dev

let resealed: ((session: SessionPayload, seen: number) => void) | undefined

/**
 * Says who hears of each re-seal (the per-user index of sessions moves the session's last-seen time: the start plugin
 * registers session-index-store.ts's noteSessionSeen). Called synchronously: the listener must not wait on anything.
 */
export function onResealed(listener: (session: SessionPayload, seen: number) => void): void {
  resealed = listener
}

/**
 * The Set-Cookie lines that slide a live session (`value` is its svc_session cookie, as sent), or undefined when none
 * is due: the idle timeout is off, less than a quarter of the window has passed since its last-seen time, or this
 * process re-sealed this same value within that quarter (requests in flight together). The new cookie keeps the
 * session's id, issue time and everything else; only `seen` moves, and its Max-Age is what is left of the 8 hours,
 * so the absolute end never moves. Then `svc_idle` with the new idle end. The listener of onResealed hears of it.
 */
export function resealLines(value: string, session: SessionPayload, now = Date.now()): string[] | undefined {
  const { config, seals, sessions } = useGatewayConfig()
  const idleMs = config.sessionIdleMs
  if (!resealDue(session, idleMs, now) || !sessions.claimReseal(value, now, idleMs / 4)) return undefined
  const maxAgeSeconds = Math.floor((sessionEndsAt(session) - now) / 1000)
  if (maxAgeSeconds <= 0) return undefined
  // `seen` has as many digits as before (or, for a cookie sealed before the timeout was on, than `iat`): the budget
  // decides all the same, and a value it cannot fit is left as it is (it ends at its idle end).
  const fit = fitSessionToBudget({ ...session, seen: now }, payload =>
    serializeCookie(SESSION_COOKIE, sealSession(payload, seals.session), { maxAgeSeconds, secure: secure }))
  if (!fit.ok) return undefined
  resealed?.(session, now)
  return [fit.setCookie, idleHintCookie(now + idleMs, maxAgeSeconds, secure)]
}

/** Sessions of open tunnels: how many tunnels follow each, and the newest last-seen time met here. */
const followed = new Map<string, { tunnels: number, seen: number }>()

function noteOpened(payload: SessionPayload): void {
  const entry = followed.get(payload.sid)
  if (entry && lastSeen(payload) > entry.seen) entry.seen = lastSeen(payload)
}

/**
 * Follows the last-seen time of a tunnel's session: each cookie of that session this process opens afterwards (the
 * browser's requests slide it) moves it on. Returns the check that says whether the session went idle meanwhile, and
 * the end of following. Another instance's re-seals are met here once the browser's next request comes here.
 */
export function followIdle(session: SessionPayload): { idle: (now: number) => boolean, stop: () => void } {
  const idleMs = useGatewayConfig().config.sessionIdleMs
  if (!idleMs) return { idle: () => false, stop: () => {} }
  useGatewayConfig().sessions.onOpened ??= noteOpened
  const entry = followed.get(session.sid) ?? { tunnels: 0, seen: lastSeen(session) }
  entry.tunnels++
  followed.set(session.sid, entry)
  let stopped = false
  return {
    idle: now => isIdle({ iat: session.iat, seen: entry.seen }, idleMs, now),
    stop: () => {
      if (stopped) return
      stopped = true
      if (--entry.tunnels === 0) followed.delete(session.sid)
    },
  }
}
