import { describe, expect, it } from 'vitest'
import { capLogField, MAX_LOG_FIELD, withoutQueries } from '../../server/core/log-field'

describe('capLogField', () => {
  it('keeps a value of up to 128 characters as it is', () => {
    expect(MAX_LOG_FIELD).toBe(128)
    expect(capLogField('sale')).toBe('sale')
    expect(capLogField('x'.repeat(128))).toBe('x'.repeat(128))
  })

  it('cuts a longer one at 128 and says how much was cut', () => {
    expect(capLogField('x'.repeat(129))).toBe(`${'x'.repeat(128)}…[+1]`)
    expect(capLogField('u'.repeat(65_000))).toBe(`${'u'.repeat(128)}…[+64872]`)
    expect(capLogField('/a/b/c', 2)).toBe('/a…[+4]')
  })
})

describe('withoutQueries', () => {
  it.each([
    ['[Vue Router warn]: No match found for location with path "/no-such-page?token=abc&x=1"', '[Vue Router warn]: No match found for location with path "/no-such-page?…'],
    ['GET http://127.0.0.1:3000/api/x?code=123 failed', 'GET http://127.0.0.1:3000/api/x?… failed'],
    ['at /a?b=1 and /c/d?e#frag', 'at /a?… and /c/d?…#frag'],
    ['/auth/login?redirect=%2Fx%3Fsecret', '/auth/login?…'],
    // Whatever stands around it: quotes, back-ticks, no path before it.
    ['GET /cb?a=1`&token=S', 'GET /cb?…'], ['redirect to ?token=S', 'redirect to ?…'], ['\'/x?\'token=S\'', '\'/x?…'],
  ])('%j -> %j', (text, expected) => {
    expect(withoutQueries(text)).toBe(expected)
  })

  it('scrubs a 16 KB line in linear time', () => {
    const started = performance.now()
    const line = `[Vue Router warn]: No match found for location with path "/x?'${'a'.repeat(16_000)}"`
    expect(withoutQueries(line)).toBe('[Vue Router warn]: No match found for location with path "/x?…')
    // Quadratic backtracking took 0.2–0.7 s on such a line; linear work takes well under a millisecond.
    expect(performance.now() - started).toBeLessThan(100)
  })

  it('leaves text without a query as it is, questions included', () => {
    for (const text of ['Bạn có muốn đăng xuất?', 'Listening on http://127.0.0.1:3000', 'why? because', '/plain/path']) {
      expect(withoutQueries(text)).toBe(text)
    }
  })
})
