import type { AuthUser } from '../../shared/types'
import type { RouteAudience } from '../core/config/types'
import { mockSessionUser } from '../core/iam/mock'
import type { AuthLevel } from '../core/session/auth-level'
import { liveToken, type SessionPayload } from '../core/session/seal'
import { useGatewayConfig } from '../ops/config'
import { runUnder, type Span } from '../ops/tracing/spans'

/**
 * Where a session's token comes from when its kind of IAM keeps the tokens beside the session, not in the cookie: its
 * main token, or the token of a route's audience.
 */
export type KeptTokenSource = (session: SessionPayload, audience?: RouteAudience) => string | undefined | Promise<string | undefined>
/** Where a session's whole user comes from when its kind of IAM keeps it beside the session (the cookie's copy may be trimmed). */
export type KeptUserSource = (session: SessionPayload) => AuthUser

/** Where a session's login level (step-up: `acr`, `auth_time`) comes from, for a kind of IAM that has one. */
export type KeptLevelSource = (session: SessionPayload) => AuthLevel | undefined

let keptTokens: KeptTokenSource | undefined
let keptUsers: KeptUserSource | undefined
let keptLevels: KeptLevelSource | undefined

/**
 * Says where sessions whose cookie holds no token find theirs (OpenID Connect: oidc/tokens.ts's oidcAccessToken,
 * registered by the start plugin), and their whole user (oidcSessionUser). The session knows no kind of IAM; each
 * plugs its own in.
 */
export function takeTokensFrom(source: KeptTokenSource, users?: KeptUserSource, levels?: KeptLevelSource): void {
  keptTokens = source
  keptUsers = users
  keptLevels = levels
}

/** The login level of a session whose token is known (OpenID Connect), for step-up; undefined when it has none. */
export function sessionAuthLevel(session: SessionPayload | null): AuthLevel | undefined {
  return session ? keptLevels?.(session) : undefined
}

/**
 * The token a live session sends to the backend: the contract IAM's from the cookie (while it has not expired); an
 * OpenID session's from its token store, renewed when due (a promise then: first use here, or a renewal), or for a
 * route with an audience (`resource` / `scope`, OpenID only: core/config/routes.ts) that audience's; none in mock
 * mode or without a session. `span` (tracing on): the request's, for a renewal's spans to join its trace.
 */
export function sessionToken(session: SessionPayload | null, audience?: RouteAudience, span?: Span): string | undefined | Promise<string | undefined> {
  if (!session) return undefined
  if (session.accessToken !== undefined) return liveToken(session)
  if (span && keptTokens) return runUnder(span, () => keptTokens!(session, audience))
  return keptTokens?.(session, audience)
}

/**
 * The user of a session whose token is known (`token`: sessionToken's answer), as forward auth reads it: null when
 * the session is not live (none; the contract IAM's token expired; an OpenID session's tokens gone); an OpenID
 * session's user as mapped at login, whole; a mock session's roles and permissions from the configuration; else
 * the cookie's copy.
 */
export function liveSessionUser(session: SessionPayload | null, token: string | undefined): AuthUser | null {
  if (!session) return null
  const { config } = useGatewayConfig()
  const oidc = config.kind === 'oidc'
  if (token === undefined && (session.accessToken !== undefined || oidc)) return null
  if (oidc) return keptUsers?.(session) ?? session.user
  return config.mock ? mockSessionUser(session.user, config.mockUser) : session.user
}
