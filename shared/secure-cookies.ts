/**
 * Whether a browser keeps the gateway's `Secure` cookies (svc_session, svc_device) from a page it has at this address:
 * over https always; over plain http only from its own machine (`localhost`, `*.localhost`, 127.0.0.0/8, `[::1]`),
 * which Chromium and Firefox count as secure. Anywhere else over http the cookie is dropped and a login comes back to
 * the login page. `protocol` as in `location.protocol` ('https:'); `host` a Host header or `location.host` (the port
 * does not matter). Pure: the server render and the browser decide alike.
 */
export function keepsSecureCookies(protocol: string, host: string): boolean {
  if (protocol.toLowerCase() === 'https:') return true
  const name = hostnameOf(host).toLowerCase().replace(/\.$/, '')
  return name === 'localhost' || name.endsWith('.localhost') || name === '::1' || /^127(?:\.\d{1,3}){3}$/.test(name)
}

/** The name of a `host[:port]` (an IPv6 address without its brackets). */
function hostnameOf(host: string): string {
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']') === -1 ? undefined : host.indexOf(']'))
  const colon = host.indexOf(':')
  return colon === -1 ? host : host.slice(0, colon)
}
