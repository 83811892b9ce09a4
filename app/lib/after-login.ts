import { navigateTo } from '#imports'

/**
 * Leaves the login page for its `redirect` target (already through the one redirect rule) with a full page load: the
 * target may be a page no route of the app answers (a service behind forward auth, `/grafana/…`), or one only an
 * app's catch-all page would match; loaded from the server, it reaches whoever serves it. Used after a login, by a tab
 * that sees another tab log in, and by the route guard for a signed-in user on the login page.
 */
export function leaveLoginPage(target: string) {
  return navigateTo(target, { replace: true, external: true })
}
