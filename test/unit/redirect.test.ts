import { describe, expect, it } from 'vitest'
import { encodeLocation, isInternalPath, safeRedirect } from '../../shared/redirect'
import { hostileRedirects } from './redirect-corpus'

const OWN = 'https://gw.example'
const HOSTILE = [
  '//evil.com', '///evil.com', '////evil.com', '/\\evil.com', '\\\\evil.com', '/\\/evil.com', '\\/evil.com',
  'https://evil.com', 'http://evil.com/path', 'HTTPS://evil.com', 'javascript:alert(1)', 'JaVaScRiPt:alert(1)',
  'data:text/html,<script>alert(1)</script>', 'evil.com', '.evil.com', '@evil.com', '/\t/evil.com', '/\n/evil.com',
  '/\r/evil.com', ' //evil.com', '\t//evil.com', '//evil.com/%2e%2e', '//%09evil.com',
  '//evil.com@gw.example', 'https:evil.com', 'http:/evil.com',
  '/\\\\evil.com', '', ' ', 'mailto:a@evil.com', '//[::1]',
  // Dot segments that collapse into a protocol-relative path (the second review's open redirect).
  '/.//evil.test', '/..//evil.test', '/%2e%2e//evil.test', '/%2E//evil.test', '/x/..//evil.test', '/x/%2e%2e//evil.test',
  '/./\\evil.test', '/.\\/evil.test', '/..\\\\evil.test', '/.//evil.test/path?x=1', '/\t.//evil.test', '/.\n//evil.test',
  '/x/../..//evil.test', '/a/b/%2e%2e/%2e%2e/%2e%2e//evil.test',
]
/** Internal targets and the path a browser opens for each (what is sent). */
const SAFE: Array<[string, string]> = [
  ['/', '/'], ['/orders', '/orders'], ['/orders?id=1&x=%2F%2Fevil.com', '/orders?id=1&x=%2F%2Fevil.com'], ['/a/b#frag', '/a/b#frag'],
  ['/đơn-hàng', '/%C4%91%C6%A1n-h%C3%A0ng'], ['/orders/%2e%2e/admin', '/admin'], ['/%09/evil.com', '/%09/evil.com'],
  ['/a/./b/../c', '/a/c'], ['/a\\b', '/a/b'], ['/\u2028/evil.com', '/%E2%80%A8/evil.com'], ['/\u00A0/evil.com', '/%C2%A0/evil.com'],
  ['/ /evil.com', '/%20/evil.com'], ['/\u0000/evil.com', '/%00/evil.com'], ['/\u3000/evil.com', '/%E3%80%80/evil.com'],
  ['/\u200B/evil.com', '/%E2%80%8B/evil.com'], ['/a//b', '/a//b'], ['/@evil.com', '/@evil.com'], ['/..', '/'], ['/orders?next=//evil.com', '/orders?next=//evil.com'],
]

describe('isInternalPath / safeRedirect', () => {
  it.each(HOSTILE)('refuses %j and keeps the origin', (input) => {
    expect(isInternalPath(input)).toBe(false)
    const result = safeRedirect(input)
    expect(result).toBe('/')
    expect(new URL(result, OWN).origin).toBe(OWN)
  })

  it.each(SAFE)('keeps %j, as the path a browser opens: %j', (input, resolved) => {
    expect(safeRedirect(input)).toBe(resolved)
    // The browser's own resolution (WHATWG URL) is the oracle: same origin, and the same path once more.
    const opened = new URL(encodeLocation(resolved), OWN)
    expect(opened.origin).toBe(OWN)
    expect(`${opened.pathname}${opened.search}${opened.hash}`).toBe(resolved)
  })

  it('falls back to an internal fallback, never to a hostile one', () => {
    expect(safeRedirect('//evil.com', '/orders')).toBe('/orders')
    expect(safeRedirect('/about', '/orders')).toBe('/about')
    expect(safeRedirect(undefined, '//evil.com')).toBe('/')
    expect(safeRedirect(undefined, undefined)).toBe('/')
  })

  it('refuses non-strings and overlong values', () => {
    for (const value of [undefined, null, 42, ['/a'], { a: 1 }, `/${'a'.repeat(3000)}`, `/${'一'.repeat(2047)}`]) expect(safeRedirect(value)).toBe('/')
  })

  it('keeps the origin for every payload of the generated corpus, raw and decoded once and twice', () => {
    const payloads = hostileRedirects()
    expect(payloads.length).toBeGreaterThan(1_000)
    let leaving = 0
    // Each check is plain code and a miss is written down, all of them asserted once at the end: an expect() per
    // check (some 100,000 of them) took seconds on a loaded machine, and the checks themselves take a fraction of one.
    const misses: string[] = []
    for (const payload of payloads) {
      const forms = [payload]
      for (let i = 0; i < 2; i++) {
        try {
          forms.push(decodeURIComponent(forms.at(-1)!))
        }
        catch { /* not decodable: the forms so far are tested */ }
      }
      for (const candidate of forms) {
        // A candidate a browser would resolve to another origin (or scheme) must never pass as internal.
        let resolved: URL | undefined
        try {
          resolved = new URL(candidate, OWN)
        }
        catch { /* unparseable: the browser would not follow it either */ }
        if (resolved && resolved.origin !== OWN) {
          leaving++
          if (isInternalPath(candidate)) misses.push(`passes as internal: ${JSON.stringify(candidate)}`)
        }
        const sent = safeRedirect(candidate)
        if (new URL(encodeLocation(sent), OWN).origin !== OWN) misses.push(`sent to another origin: ${JSON.stringify(candidate)}`)
        // What is sent is already resolved: sending it again opens the same path, never a `//host` one.
        if (sent.startsWith('//')) misses.push(`sent as a //host path: ${JSON.stringify(candidate)}`)
        if (safeRedirect(sent) !== sent) misses.push(`not stable once sent: ${JSON.stringify(candidate)}`)
      }
    }
    expect(misses.length, misses.slice(0, 10).join('\n')).toBe(0)
    // The corpus really attacks: most of its decoded payloads leave the origin when followed naively.
    expect(leaving).toBeGreaterThan(1_000)
  })
})

describe('encodeLocation', () => {
  it('percent-encodes non-ASCII for a Location header', () => {
    expect(encodeLocation('/đơn?q=á')).toBe('/%C4%91%C6%A1n?q=%C3%A1')
  })
  it('falls back to / on a lone surrogate', () => {
    expect(encodeLocation('/a\uD800')).toBe('/')
  })
})
