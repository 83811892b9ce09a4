import { liveToken, type SessionPayload } from '../core/session/seal'

/** Where a session's token comes from when its kind of IAM keeps the tokens beside the session, not in the cookie. */
export type KeptTokenSource = (session: SessionPayload) => string | undefined | Promise<string | undefined>

let keptTokens: KeptTokenSource | undefined

/**
 * Says where sessions whose cookie holds no token find theirs (OpenID Connect: oidc/tokens.ts's oidcAccessToken,
 * registered by the start plugin). The session knows no kind of IAM; each plugs its own in.
 */
export function takeTokensFrom(source: KeptTokenSource): void {
  keptTokens = source
}

/**
 * The token a live session sends to the backend: the contract IAM's from the cookie (while it has not expired); an
 * OpenID session's from its token store, renewed when due (a promise then: first use here, or a renewal); none in mock
 * mode or without a session.
 */
export function sessionToken(session: SessionPayload | null, now = Date.now()): string | undefined | Promise<string | undefined> {
  if (!session) return undefined
  if (session.accessToken !== undefined) return liveToken(session, now)
  return keptTokens?.(session)
}
