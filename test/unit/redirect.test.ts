import { describe, expect, it } from 'vitest'
import { encodeLocation, isInternalPath, safeRedirect } from '../../shared/redirect'
import { hostileRedirects } from './redirect-corpus'

const OWN = 'https://gw.example'
const HOSTILE = [
  '//evil.com', '///evil.com', '////evil.com', '/\\evil.com', '\\\\evil.com', '/\\/evil.com', '\\/evil.com',
  'https://evil.com', 'http://evil.com/path', 'HTTPS://evil.com', 'javascript:alert(1)', 'JaVaScRiPt:alert(1)',
  'data:text/html,<script>alert(1)</script>', 'evil.com', '.evil.com', '@evil.com', '/\t/evil.com', '/\n/evil.com',
  '/\r/evil.com', ' //evil.com', '/ /evil.com', '\t//evil.com', '//evil.com/%2e%2e', '//%09evil.com',
  '/\u0000/evil.com', '/\u3000/evil.com', '/\u200B/evil.com', '//evil.com@gw.example', 'https:evil.com', 'http:/evil.com',
  '/\\\\evil.com', '', ' ', 'mailto:a@evil.com', '//[::1]', '/\u2028/evil.com', '/\u00A0/evil.com',
]
const SAFE = ['/', '/orders', '/orders?id=1&x=%2F%2Fevil.com', '/a/b#frag', '/đơn-hàng', '/orders/%2e%2e/admin', '/%09/evil.com']

describe('isInternalPath / safeRedirect', () => {
  it.each(HOSTILE)('refuses %j and keeps the origin', (input) => {
    expect(isInternalPath(input)).toBe(false)
    const result = safeRedirect(input)
    expect(result).toBe('/')
    expect(new URL(result, OWN).origin).toBe(OWN)
  })

  it.each(SAFE)('keeps the internal path %j', (input) => {
    expect(safeRedirect(input)).toBe(input)
    expect(new URL(encodeLocation(input), OWN).origin).toBe(OWN)
  })

  it('falls back to an internal fallback, never to a hostile one', () => {
    expect(safeRedirect('//evil.com', '/orders')).toBe('/orders')
    expect(safeRedirect('/about', '/orders')).toBe('/about')
    expect(safeRedirect(undefined, '//evil.com')).toBe('/')
    expect(safeRedirect(undefined, undefined)).toBe('/')
  })

  it('refuses non-strings and overlong values', () => {
    for (const value of [undefined, null, 42, ['/a'], { a: 1 }, `/${'a'.repeat(3000)}`]) expect(safeRedirect(value)).toBe('/')
  })

  it('keeps the origin for every payload of the generated corpus, raw and decoded once and twice', () => {
    const payloads = hostileRedirects()
    expect(payloads.length).toBeGreaterThan(1_000)
    let leaving = 0
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
          expect(isInternalPath(candidate), JSON.stringify(candidate)).toBe(false)
        }
        const location = encodeLocation(safeRedirect(candidate))
        expect(new URL(location, OWN).origin, JSON.stringify(candidate)).toBe(OWN)
      }
    }
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
