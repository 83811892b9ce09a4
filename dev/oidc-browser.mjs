// @ts-check
/**
 * A browser's part of an OpenID login, by fetch, for the tests, the bench and dev/oidc-demo-check.mjs: one cookie jar
 * for every 127.0.0.1 port (cookies ignore ports, as browsers do), redirects followed by hand, and the development
 * provider's own login form (dev/oidc-provider.mjs) filled in.
 */

/** A cookie jar and the two moves of a browser: one request, or a request and its redirects. */
export function cookieAgent() {
  /** @type {Map<string, string>} */
  const jar = new Map()
  /**
   * One request with the jar's cookies; the answer's Set-Cookie lines go into the jar (a cleared one leaves it).
   * @param {string | URL} url
   * @param {RequestInit} [init]
   */
  async function go(url, init = {}) {
    const headers = new Headers(init.headers)
    if (jar.size) headers.set('cookie', [...jar].map(([name, value]) => `${name}=${value}`).join('; '))
    const response = await fetch(url, { ...init, headers, redirect: 'manual' })
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(';')[0] ?? ''
      const name = pair.slice(0, pair.indexOf('='))
      const value = pair.slice(pair.indexOf('=') + 1)
      if (value && !/max-age=0|expires=Thu, 01 Jan 1970/i.test(line)) jar.set(name, value)
      else jar.delete(name)
    }
    return response
  }
  /**
   * Follows redirects until `stop` says so for the next address (not fetched; default: never) or an answer is not a
   * redirect.
   * @param {string | URL} url
   * @param {RequestInit} [init]
   * @param {(at: URL) => boolean} [stop]
   * @returns {Promise<{ url: URL, response: Response }>}
   */
  async function follow(url, init = {}, stop = () => false) {
    let at = new URL(url)
    let response = await go(at, init)
    while (response.status >= 300 && response.status < 400) {
      at = new URL(/** @type {string} */ (response.headers.get('location')), at)
      if (stop(at)) break
      response = await go(at)
    }
    return { url: at, response }
  }
  return { jar, go, follow }
}

/** @typedef {ReturnType<typeof cookieAgent>} CookieAgent */

/**
 * From `start` (an address that leads to the provider) through the development provider's own login form: its
 * credentials sent, or its Cancel pressed. Redirects are followed until `stop` (default: never); the last address and
 * answer come back.
 * @param {CookieAgent} agent
 * @param {string | URL} start
 * @param {string} provider the provider's origin (its form's address is relative to it)
 * @param {{ username?: string, password?: string, otp?: string, cancel?: boolean, stop?: (at: URL) => boolean }} [options]
 *   `otp`: the one-time code, for a form that asks for one (a step-up to acr `mfa`)
 */
export async function throughProviderForm(agent, start, provider, options = {}) {
  const { username = 'admin', password = 'admin123', otp, cancel = false, stop } = options
  let { url, response } = await agent.follow(start, {}, stop)
  if (url.origin === provider && response.status === 200) {
    const action = /<form method="post" action="([^"]+)"/.exec(await response.text())?.[1]
    if (!action) throw new Error(`the provider showed no login form at ${url}`)
    const target = new URL(cancel ? action.replace(/login$/, 'abort') : action, provider)
    const form = cancel ? new URLSearchParams({ cancel: 'yes' }) : new URLSearchParams({ username, password, ...(otp ? { otp } : {}) })
    ;({ url, response } = await agent.follow(target, { method: 'POST', body: form }, stop))
  }
  return { url, response }
}

/**
 * Logs in on a gateway as a browser would: GET /auth/sso, the provider's own form, back through the gateway's
 * callback; stops at the first gateway address outside /auth/ (the page it lands on, not fetched), or where `until`
 * says (a test stopping at the callback, to replay it).
 * @param {CookieAgent} agent
 * @param {string} gateway
 * @param {string} provider
 * @param {{ username?: string, password?: string, otp?: string, from?: string, cancel?: boolean, until?: (at: URL) => boolean }} [options]
 */
export function logInWithProvider(agent, gateway, provider, options = {}) {
  const stop = options.until ?? (at => at.origin === gateway && !at.pathname.startsWith('/auth/'))
  return throughProviderForm(agent, `${gateway}/auth/sso?redirect=${encodeURIComponent(options.from ?? '/')}`, provider, { ...options, stop })
}
