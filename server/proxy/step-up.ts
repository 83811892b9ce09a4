import type { IncomingMessage, ServerResponse } from 'node:http'
import { meetsNeed, stepUpHint, stepUpQuery, type AuthLevelNeed } from '../core/session/auth-level'
import type { SessionPayload } from '../core/session/seal'
import { GatewayError, MESSAGES, sendGatewayError } from '../http/errors'
import { sessionAuthLevel } from '../session/token'

/**
 * Step-up on /api (OpenID sessions): a route that needs a login level the session's login does not have (its ID
 * token's `acr`, `auth_time`), or a backend's RFC 9470 challenge asking for one, is answered here, not by the backend.
 * A page navigation goes to the provider (GET /auth/sso with `acr_values`/`max_age`) and comes back to the same
 * address; a script gets 401 in the contract's form with `stepUp: { acr, maxAge }` (useAuth().stepUp() starts it).
 */

/** The need a session does not meet for a route (undefined: it may go on). */
export function unmetStepUp(need: AuthLevelNeed | undefined, session: SessionPayload | null): AuthLevelNeed | undefined {
  return need && !meetsNeed(sessionAuthLevel(session), need, Date.now()) ? need : undefined
}

/** A browser's navigation to the address (a link, the address bar), not a script's request. */
function isNavigation(req: IncomingMessage): boolean {
  const mode = req.headers['sec-fetch-mode']
  if (mode) return mode === 'navigate'
  return (req.method === 'GET' || req.method === 'HEAD') && String(req.headers.accept ?? '').includes('text/html')
}

/** Answers a step-up: 302 to the provider for a navigation, else the 401 with the hint. */
export function answerStepUp(req: IncomingMessage, res: ServerResponse, id: string, need: AuthLevelNeed, slide: string[] | undefined): void {
  if (res.headersSent) return void res.destroy()
  res.setHeader('x-request-id', id)
  if (slide) res.setHeader('set-cookie', slide)
  if (isNavigation(req)) {
    res.statusCode = 302
    res.setHeader('cache-control', 'no-store')
    res.setHeader('location', `/auth/sso?${stepUpQuery(need)}&redirect=${encodeURIComponent(req.url ?? '/')}`)
    res.end()
    return
  }
  sendGatewayError(res, new GatewayError(401, MESSAGES.stepUpRequired, {}, { stepUp: stepUpHint(need) }))
}
