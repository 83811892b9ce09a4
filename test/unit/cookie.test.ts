import { describe, expect, it } from 'vitest'
import { cookieValues, readCookie, readSingleCookie } from '../../server/core/cookie'

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
  ])('%j holds svc_session values %j', (header, values) => {
    expect(cookieValues(header, 'svc_session')).toEqual(values)
    expect(readCookie(header, 'svc_session')).toBe(values[0])
  })

  it('gives a cookie that must be unique only when it is sent once', () => {
    expect(readSingleCookie('svc_session=a; other=1', 'svc_session')).toBe('a')
    expect(readSingleCookie('svc_session=planted; svc_session=a', 'svc_session')).toBeUndefined()
    expect(readSingleCookie('other=1', 'svc_session')).toBeUndefined()
  })
})
