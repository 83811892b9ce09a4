// The layer's server API: the only names it adds to the app's server auto-imports (README, API). Everything else of
// the gateway lives in server/lib/ and is imported by path, so an app's own util of any name never meets it.
export { onProxyRequest } from '../lib/proxy-hooks'
export { revokeUserSessions } from '../lib/revocations'
export { readGatewaySession } from '../lib/session-cookie'
