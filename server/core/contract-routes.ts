/** The contract's routes under /auth and the methods each answers. Pure. */

/** Methods of each contract route; GET /auth/login (and HEAD) is the login page. HEAD is served as GET. */
const CONTRACT_METHODS: Record<string, readonly string[]> = {
  '/auth/login': ['GET', 'HEAD', 'POST'],
  '/auth/session': ['GET', 'HEAD'],
  '/auth/clients': ['GET', 'HEAD'],
  '/auth/otp/send': ['POST'],
  '/auth/logout': ['GET', 'HEAD'],
}

/** The methods a router path accepts when it is a contract route (the router ignores one trailing '/'), else undefined. */
export function contractMethods(path: string): readonly string[] | undefined {
  const key = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path
  return Object.hasOwn(CONTRACT_METHODS, key) ? CONTRACT_METHODS[key] : undefined
}
