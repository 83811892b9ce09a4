// The layer's server API: the only names it adds to the app's server auto-imports (README, API). Everything else of
// the gateway lives in the folders of server/ (docs/architecture.md) and is imported by path, so an app's own util of any name never meets it.
export { onProxyRequest } from '../proxy/hooks'
export { revokeUserSessions } from '../session/revocations'
export { readGatewaySession } from '../session/cookie'
export { endSession, listUserSessions } from '../session/user-sessions'
