import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { encodeLocation, isInternalPath, safeRedirect } from '../../shared/redirect'

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

  it('refuses non-strings and overlong values', () => {
    for (const value of [undefined, null, 42, ['/a'], { a: 1 }, `/${'a'.repeat(3000)}`]) expect(safeRedirect(value)).toBe('/')
  })

  it('keeps the origin for every payload of the open-redirect corpus, raw and decoded once', () => {
    const file = fileURLToPath(new URL('../../../shared/data/openredirects.txt', import.meta.url))
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean)
    expect(lines.length).toBeGreaterThan(550)
    for (const line of lines) {
      let decoded = line
      try {
        decoded = decodeURIComponent(line)
      }
      catch { /* not decodable: the raw line is tested */ }
      for (const candidate of [line, decoded]) {
        const location = encodeLocation(safeRedirect(candidate))
        expect(new URL(location, OWN).origin, candidate).toBe(OWN)
      }
    }
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
