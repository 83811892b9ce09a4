/**
 * Cross-origin protection for unsafe methods, the decision of Go's http.CrossOriginProtection. Pure.
 * SameSite=Lax alone lets a same-site page (another port, a sibling subdomain) post forms; this closes that.
 */

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

export interface OriginFacts {
  method: string
  /** Sec-Fetch-Site as sent, or undefined. */
  secFetchSite?: string
  /** Origin as sent, or undefined. */
  origin?: string
  /** host[:port] the browser addressed (Host, or the believed X-Forwarded-Host). */
  host: string
  /** Origins listed in APP_TRUSTED_ORIGINS, lower-case, without a trailing '/'. */
  trustedOrigins: readonly string[]
}

/** host[:port] of an Origin value (default ports dropped), or undefined when it is not an http(s) origin. */
function originHost(origin: string): string | undefined {
  try {
    const url = new URL(origin)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.host : undefined
  }
  catch {
    return undefined
  }
}

function normalizedHost(host: string): string {
  const lower = host.trim().toLowerCase()
  return lower.replace(/:(80|443)$/, '')
}

/** Whether the request passes: safe methods always; otherwise Sec-Fetch-Site first, then Origin against Host. */
export function isSameOriginRequest(facts: OriginFacts): boolean {
  if (SAFE_METHODS.has(facts.method.toUpperCase())) return true
  const trusted = facts.origin !== undefined && facts.trustedOrigins.includes(facts.origin.trim().toLowerCase().replace(/\/+$/, ''))
  if (facts.secFetchSite !== undefined) {
    const site = facts.secFetchSite.trim().toLowerCase()
    return site === 'same-origin' || site === 'none' || trusted
  }
  if (facts.origin === undefined) return true
  const host = originHost(facts.origin)
  return (host !== undefined && normalizedHost(host) === normalizedHost(facts.host)) || trusted
}

/**
 * Whether a WebSocket handshake may pass (a GET, so the unsafe-method rule does not cover it, yet the browser sends the
 * session cookie with it from any site): no Origin (a client that is not a browser) passes; otherwise its host must be
 * the request's host (default ports dropped) or the origin must be listed in APP_TRUSTED_ORIGINS. `null` never passes.
 */
export function isSameOriginHandshake(origin: string | undefined, host: string, trustedOrigins: readonly string[]): boolean {
  if (origin === undefined) return true
  if (trustedOrigins.includes(origin.trim().toLowerCase().replace(/\/+$/, ''))) return true
  const originOf = originHost(origin)
  return originOf !== undefined && normalizedHost(originOf) === normalizedHost(host)
}
