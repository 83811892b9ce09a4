/** The contract's routes under /auth, the methods each answers and its group in the metrics. Pure. */

export interface ContractRoute {
  /** Methods it answers; GET /auth/login (and HEAD) is the login page. HEAD is served as GET. */
  methods: readonly string[]
  group: 'login' | 'session' | 'clients' | 'otp' | 'logout' | 'verify'
}

const CONTRACT_ROUTES: Record<string, ContractRoute> = {
  '/auth/login': { methods: ['GET', 'HEAD', 'POST'], group: 'login' },
  '/auth/session': { methods: ['GET', 'HEAD'], group: 'session' },
  '/auth/clients': { methods: ['GET', 'HEAD'], group: 'clients' },
  '/auth/otp/send': { methods: ['POST'], group: 'otp' },
  '/auth/logout': { methods: ['GET', 'HEAD'], group: 'logout' },
  // The forward-auth check (verify/forward-auth.ts), answered at the gate.
  '/auth/verify': { methods: ['GET', 'HEAD'], group: 'verify' },
  // OpenID Connect (APP_AUTH_KIND=oidc; 404 otherwise): the trip to the provider and back, its back-channel logout.
  '/auth/sso': { methods: ['GET', 'HEAD'], group: 'login' },
  // GET only: a HEAD would spend the code without a page to show.
  '/auth/callback': { methods: ['GET'], group: 'login' },
  '/auth/backchannel-logout': { methods: ['POST'], group: 'logout' },
  // A user's own sessions (issue 41): the list, the end of one, the end of all others.
  '/auth/sessions': { methods: ['GET', 'HEAD'], group: 'session' },
  '/auth/sessions/end': { methods: ['POST'], group: 'session' },
  '/auth/sessions/end-others': { methods: ['POST'], group: 'session' },
  // Where the provider's logout sends the browser back (post_logout_redirect_uri).
  '/auth/logged-out': { methods: ['GET', 'HEAD'], group: 'logout' },
}

/** The contract route of a router path (the router ignores one trailing '/'), else undefined. */
export function contractRoute(path: string): ContractRoute | undefined {
  const key = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path
  return Object.hasOwn(CONTRACT_ROUTES, key) ? CONTRACT_ROUTES[key] : undefined
}

/** The methods a router path accepts when it is a contract route, else undefined. */
export function contractMethods(path: string): readonly string[] | undefined {
  return contractRoute(path)?.methods
}

/** The operations probes, answered by the gateway itself ahead of every rule: '/healthz' or '/readyz' (one trailing '/' ignored). */
export function probeOf(path: string): 'healthz' | 'readyz' | undefined {
  const key = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path
  return key === '/healthz' ? 'healthz' : key === '/readyz' ? 'readyz' : undefined
}
