/**
 * verify/: forward auth, GET /auth/verify for a reverse proxy in front of other services (this file).
 * May import: core, ops, http, stores, session, oidc (an OpenID session's whole user). Never proxy/ or iam/.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { ClientInfo } from '../core/http/forwarding'
import { mockSessionUser } from '../core/iam/mock'
import { readSingleCookie, SESSION_COOKIE } from '../core/session/cookie'
import type { SessionPayload } from '../core/session/seal'
import { authRequestHeaders, checkQuery, isAllowed, loginLocation, wantsLoginRedirect, type ForwardedRequest, type VerifyQuery } from '../core/verify/forward-auth'
import { GatewayError, MESSAGES, sendGatewayError, toGatewayError } from '../http/errors'
import { oidcSessionUser } from '../oidc/token-cache'
import { useGatewayConfig } from '../ops/config'
import { openLiveSession } from '../session/cookie'
import { resealLines } from '../session/idle'
import { sessionToken } from '../session/token'

const VERIFY_PATH = '/auth/verify'

/** A header's one value: a repeated one is not believed (Node joins repeats of unknown headers with ', '). */
function single(req: IncomingMessage, name: string): string | undefined {
  const values = req.headersDistinct[name]
  return values?.length === 1 ? values[0] : undefined
}

/** What the proxy in front says of the request it checks: only from a trusted proxy (APP_TRUST_PROXY). */
function forwardedRequest(req: IncomingMessage, client: ClientInfo): ForwardedRequest | undefined {
  if (!client.viaTrustedProxy) return undefined
  return { proto: client.proto, host: client.host, uri: single(req, 'x-forwarded-uri'), method: single(req, 'x-forwarded-method') }
}

/**
 * GET /auth/verify, answered at the gate (no IAM call, no Redis call: the session read the proxy uses, revocations
 * included). 200 with no body and the X-Auth-Request-* headers (and `Authorization: Bearer` with
 * APP_VERIFY_PASS_TOKEN) when the request carries a live session holding the permissions asked for; 403 when it lacks
 * one; 401 without a live session, or 302 to the login page for a browser navigation a proxy passed on (see
 * core/verify/forward-auth.ts); 400 for a query that is not `permission`/`any` values (unless it is the client's own,
 * which a trusted proxy carried in: checkQuery), or a path spelled otherwise than `/auth/verify`.
 */
export function answerVerify(req: IncomingMessage, res: ServerResponse, client: ClientInfo): void {
  const url = req.url ?? ''
  const queryAt = url.indexOf('?')
  // Only the path as written: another spelling the router takes for it (`/auth/verify%3Fpermission=…`) would hide
  // the query, and ask for nothing.
  if ((queryAt === -1 ? url : url.slice(0, queryAt)) !== VERIFY_PATH) return sendGatewayError(res, new GatewayError(400, MESSAGES.requestTargetInvalid))
  const forwarded = forwardedRequest(req, client)
  const query = checkQuery(queryAt === -1 ? '' : url.slice(queryAt + 1), forwarded?.uri)
  if (!query) return sendGatewayError(res, new GatewayError(400, MESSAGES.verifyQueryInvalid))
  const cookie = readSingleCookie(req.headers.cookie, SESSION_COOKIE)
  const session = openLiveSession(cookie)
  // A session whose token is gone is no session here, as for the proxy: the contract IAM's expired, an OpenID session's
  // tokens no longer kept (or refused at renewal); mock sessions have none.
  const token = sessionToken(session)
  if (token instanceof Promise) {
    token.then(value => answerCheck(req, res, client, forwarded, query, session, value, cookie), (error: unknown) => sendGatewayError(res, toGatewayError(error)))
    return
  }
  answerCheck(req, res, client, forwarded, query, session, token, cookie)
}

/** The check's answer once the session's token is known (`cookie`: the session's svc_session value, to slide it). */
function answerCheck(req: IncomingMessage, res: ServerResponse, client: ClientInfo, forwarded: ForwardedRequest | undefined, query: VerifyQuery, session: SessionPayload | null, token: string | undefined, cookie: string | undefined): void {
  const { config } = useGatewayConfig()
  const oidc = config.kind === 'oidc'
  const live = !!session && (token !== undefined || (!session.accessToken && !oidc))
  // An OpenID session's user as mapped at login, whole (the cookie's copy may be trimmed to 4 KB); a mock session's
  // roles and permissions from the configuration.
  const user = !live ? null : oidc ? oidcSessionUser(session!) : config.mock ? mockSessionUser(session!.user, config.mockUser) : session!.user
  if (!user) {
    const hints = { secFetchMode: single(req, 'sec-fetch-mode'), accept: single(req, 'accept') }
    if (wantsLoginRedirect(forwarded, hints)) {
      res.writeHead(302, { 'location': loginLocation(forwarded, config.trustedOrigins), 'cache-control': 'no-store', 'content-length': '0' }).end()
      return
    }
    return sendGatewayError(res, new GatewayError(401, MESSAGES.verifyNoSession))
  }
  if (!isAllowed(user, query)) return sendGatewayError(res, new GatewayError(403, MESSAGES.verifyForbidden))
  const headers: Record<string, string> = { ...authRequestHeaders(user), 'cache-control': 'no-store', 'content-length': '0' }
  // The token only to a trusted proxy: anyone else asking is a browser's script or a stranger (docs/forward-auth.md).
  if (config.verifyPassToken && token && client.viaTrustedProxy) headers.authorization = `Bearer ${token}`
  // A request let through is activity: the idle timeout slides when due (the proxy in front must copy this
  // Set-Cookie onto the service's answer for the browser to get it: docs/forward-auth.md). A check sent with
  // X-Session-Peek (a tab of the app asking whether its session still lives: app/plugins/02.auth.ts) is none.
  const slide = req.headers['x-session-peek'] === undefined ? resealLines(cookie!, session!) : undefined
  res.writeHead(200, slide ? { ...headers, 'set-cookie': slide } : headers).end()
}
