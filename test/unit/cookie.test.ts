import { describe, expect, it } from 'vitest'
import { cookieValues, readCookie, readSingleCookie } from '../../server/core/session/cookie'

describe('reading the Cookie header', () => {
  it.each([
    [undefined, []],
    ['', []],
    ['svc_session=a', ['a']],
    ['x=1; svc_session=a; y=2', ['a']],
    ['svc_session=a; svc_session=b', ['a', 'b']],
    ['svc_session=a;svc_session=b', ['a', 'b']],
    ['svc_session_x=1; xsvc_session=2', []],
    ['svc_session=', ['']],
    ['x=1;\tsvc_session=a ', ['a']],
    // Only SP and HTAB are white space (RFC 6265): a pair behind U+00A0 is no svc_session cookie, as for nginx and Caddy.
    ['a=1;\u00a0svc_session=a', []],
    ['\u00a0svc_session=a', []],
    ['svc_session=a\u00a0', ['a\u00a0']],
  ])('%j holds svc_session values %j', (header, values) => {
    expect(cookieValues(header, 'svc_session')).toEqual(values)
    expect(readCookie(header, 'svc_session')).toBe(values[0])
  })

  // readSingleCookie reads the usual header in place: it must answer as the definition (a lone value of cookieValues).
  it.each([
    undefined, '', 'svc_session', 'svc_session=a', 'svc_session=', ' svc_session=a ', 'svc_session=a ;x=1', 'x=1;svc_session=a',
    'x=1;  \tsvc_session=a\t; y=2', 'x=1; \u00a0svc_session=a\u00a0', 'xsvc_session=a', 'x=svc_session=a', 'x=1 svc_session=a',
    'svc_session_x=1', 'svc_session=a=b', 'svc_session=a; svc_session=b', 'svc_session=a; xsvc_session=b', 'xsvc_session=b; svc_session=a',
    'x=svc_session=; svc_session=a', 'svc_session=svc_session=a', ';;svc_session=a;;', 'svc_session=a svc_session=b',
    'svc_session=a; x=svc_session=b', 'svc_session=a;svc_session=a', `svc_session=v1.${'A'.repeat(3500)}.tag; theme=dark`,
  ])('%j: the lone svc_session value, read in place, is the one cookieValues finds', (header) => {
    const values = cookieValues(header, 'svc_session')
    expect(readSingleCookie(header, 'svc_session')).toBe(values.length === 1 ? values[0] : undefined)
  })

  it('gives a cookie that must be unique only when it is sent once', () => {
    expect(readSingleCookie('svc_session=a; other=1', 'svc_session')).toBe('a')
    expect(readSingleCookie('svc_session=planted; svc_session=a', 'svc_session')).toBeUndefined()
    expect(readSingleCookie('other=1', 'svc_session')).toBeUndefined()
  })
})
