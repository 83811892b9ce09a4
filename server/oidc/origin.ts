import type { H3Event } from 'h3'
import { requestScope, unscopedClient } from '../http/scope'
import { oidcSettings } from './provider'

/** Where the provider sends the browser back to the gateway. */
const CALLBACK_PATH = '/auth/callback'

/** The gateway's own origin as the browser sees it (X-Forwarded-Proto/-Host from a trusted proxy). */
function ownOrigin(event: H3Event): string {
  const client = requestScope(event)?.client ?? unscopedClient(event.node.req)
  return `${client.proto}://${client.host}`
}

/** Where the provider sends the browser back: APP_OIDC_REDIRECT_URI, else this origin's /auth/callback. */
export function redirectUriFor(event: H3Event): string {
  return oidcSettings().redirectUri || `${ownOrigin(event)}${CALLBACK_PATH}`
}

/** Where the provider sends the browser back after its logout (the state is checked there). */
export const LOGGED_OUT_PATH = '/auth/logged-out'

/** Where the provider sends the browser after its logout: APP_OIDC_POST_LOGOUT_REDIRECT_URI, else this origin's /auth/logged-out. */
export function postLogoutUriFor(event: H3Event): string {
  return oidcSettings().postLogoutRedirectUri || `${ownOrigin(event)}${LOGGED_OUT_PATH}`
}
