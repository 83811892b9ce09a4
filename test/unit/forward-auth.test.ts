import { describe, expect, it } from 'vitest'
import { authRequestHeaders, checkQuery, headerValue, isAllowed, loginLocation, parseVerifyQuery, wantsLoginRedirect, type ForwardedRequest } from '../../server/core/verify/forward-auth'
import type { AuthUser } from '../../shared/types'

const user: AuthUser = { id: 'u-1', name: 'An', email: 'an@example.com', roles: ['ADMIN', 'SALE'], permissions: ['/grafana/view', '/orders/search'] }

describe('parseVerifyQuery', () => {
  it('reads permission (all needed) and any (one of them), repeated', () => {
    expect(parseVerifyQuery('')).toEqual({ all: [], any: [] })
    expect(parseVerifyQuery('permission=/grafana/view&permission=%2Forders%2Fsearch&any=/a&any=/b')).toEqual({ all: ['/grafana/view', '/orders/search'], any: ['/a', '/b'] })
  })
  it.each([
    ['an unknown name (a typo must not let everyone in)', 'permision=/grafana/view'],
    ['an empty value', 'permission='],
    ['a name alone', 'permission'],
    ['a value over 512 characters', `permission=${'x'.repeat(513)}`],
    ['more than 32 of a kind', Array.from({ length: 33 }, (_, i) => `any=/p${i}`).join('&')],
  ])('refuses %s', (_, search) => {
    expect(parseVerifyQuery(search)).toBeUndefined()
  })
})

describe('checkQuery', () => {
  it('takes a query that is the client\'s, carried in by the proxy (X-Forwarded-Uri says so), as asking for nothing', () => {
    // Caddy's forward_auth with `uri /auth/verify` keeps the client's query: /grafana/d/x?orgId=1 is checked as /auth/verify?orgId=1.
    expect(checkQuery('orgId=1', '/grafana/d/x?orgId=1')).toEqual({ all: [], any: [] })
    expect(checkQuery('a=%20b&tab=history', '/wiki/?a=%20b&tab=history')).toEqual({ all: [], any: [] })
  })
  it('reads a query it can read as the check\'s own, even when the client sent the same: a client cannot name its way in', () => {
    // nginx's `auth_request /auth/verify?permission=/admin` for /admin/?permission=/admin: the permission is still needed.
    expect(checkQuery('permission=/admin', 'https://app.example/admin/?permission=/admin')).toEqual({ all: ['/admin'], any: [] })
    expect(checkQuery('permission=/admin&any=/a', '/admin/?permission=/admin&any=/a')).toEqual({ all: ['/admin'], any: ['/a'] })
    // Through Caddy's `uri /auth/verify`, a client that names a permission in its own URL only asks more of itself.
    expect(checkQuery('any=/x', '/wiki/?any=/x')).toEqual({ all: [], any: ['/x'] })
  })
  it('reads a query of the check\'s own address as before: a typo is still refused, whatever the client asked for', () => {
    expect(checkQuery('permission=/grafana/view', '/grafana/d/x?orgId=1')).toEqual({ all: ['/grafana/view'], any: [] })
    expect(checkQuery('permision=/grafana/view', '/grafana/d/x?orgId=1')).toBeUndefined()
    expect(checkQuery('permision=/grafana/view', '/grafana/d/x')).toBeUndefined()
    expect(checkQuery('permision=/grafana/view', undefined)).toBeUndefined()
    // A typo in the check's own address stays refused when a client copies it into its URL (X-Forwarded-Uri the same),
    // and so does any name that could be the check's, whatever its value: too many, too long or empty.
    for (const typo of ['permision=/grafana/view', 'Permission=/x', 'permissions=/x', 'premission=/x', 'per-mission=/x', 'any_of=/x', 'ANY=/x', 'id=7&permision=/x', 'permission=', `permission=${'x'.repeat(513)}`]) {
      expect(checkQuery(typo, `/grafana/?${typo}`), typo).toBeUndefined()
    }
    // Part of the client's query is not the client's query.
    expect(checkQuery('orgId=1', '/grafana/d/x?orgId=1&to=now')).toBeUndefined()
    expect(checkQuery('', '/grafana/d/x?orgId=1')).toEqual({ all: [], any: [] })
  })
})

describe('isAllowed', () => {
  it('needs every permission and one of any', () => {
    expect(isAllowed(user, { all: [], any: [] })).toBe(true)
    expect(isAllowed(user, { all: ['/grafana/view', '/orders/search'], any: [] })).toBe(true)
    expect(isAllowed(user, { all: ['/grafana/view', '/grafana/edit'], any: [] })).toBe(false)
    expect(isAllowed(user, { all: [], any: ['/x', '/orders/search'] })).toBe(true)
    expect(isAllowed(user, { all: ['/grafana/view'], any: ['/x', '/y'] })).toBe(false)
  })
})

describe('authRequestHeaders', () => {
  it('names the user by e-mail, else by id, and lists the roles', () => {
    expect(authRequestHeaders(user)).toEqual({ 'x-auth-request-user': 'an@example.com', 'x-auth-request-user-id': 'u-1', 'x-auth-request-email': 'an@example.com', 'x-auth-request-roles': 'ADMIN,SALE' })
    expect(authRequestHeaders({ ...user, email: '', roles: [] })).toEqual({ 'x-auth-request-user': 'u-1', 'x-auth-request-user-id': 'u-1', 'x-auth-request-email': '', 'x-auth-request-roles': '' })
  })
  it('sends no CR, LF or other control character, percent-encodes non-ASCII, % and a comma inside a role', () => {
    const hostile = authRequestHeaders({ ...user, id: 'a\r\nX-Auth-Request-User: admin', email: '', roles: ['A,B', 'Quản trị', '100%'] })
    expect(hostile['x-auth-request-user-id']).toBe('a%0D%0AX-Auth-Request-User: admin')
    expect(hostile['x-auth-request-roles']).toBe('A%2CB,Qu%E1%BA%A3n tr%E1%BB%8B,100%25')
    for (const value of Object.values(hostile)) expect(value).toMatch(/^[\x20-\x7E]*$/)
    expect(decodeURIComponent(hostile['x-auth-request-user-id'])).toBe('a\r\nX-Auth-Request-User: admin')
  })
  it('drops a lone surrogate', () => {
    expect(headerValue('a\uD800b')).toBe('ab')
  })
})

describe('wantsLoginRedirect', () => {
  const forwarded: ForwardedRequest = { proto: 'https', host: 'app.example', uri: '/grafana/d/1?x=1', method: 'GET' }
  it('sends a GET navigation a proxy passed on to the login page', () => {
    expect(wantsLoginRedirect(forwarded, { secFetchMode: 'navigate', accept: undefined })).toBe(true)
    expect(wantsLoginRedirect({ ...forwarded, method: undefined }, { secFetchMode: undefined, accept: 'text/html,application/xhtml+xml' })).toBe(true)
    expect(wantsLoginRedirect({ ...forwarded, method: 'head' }, { secFetchMode: 'navigate', accept: undefined })).toBe(true)
  })
  it('answers 401 to a script, a POST, a request without X-Forwarded-Uri or one not from a trusted proxy', () => {
    expect(wantsLoginRedirect(forwarded, { secFetchMode: 'cors', accept: 'text/html' })).toBe(false)
    expect(wantsLoginRedirect(forwarded, { secFetchMode: undefined, accept: 'application/json' })).toBe(false)
    expect(wantsLoginRedirect({ ...forwarded, method: 'POST' }, { secFetchMode: 'navigate', accept: undefined })).toBe(false)
    expect(wantsLoginRedirect({ ...forwarded, uri: undefined }, { secFetchMode: 'navigate', accept: undefined })).toBe(false)
    expect(wantsLoginRedirect(undefined, { secFetchMode: 'navigate', accept: undefined })).toBe(false)
  })
})

describe('loginLocation with hostile X-Forwarded-* values', () => {
  const at = (uri: string, host = 'app.example', proto = 'https') => decodeURIComponent(loginLocation({ proto, host, uri, method: 'GET' }, ['https://partner.example']).replace('/auth/login?redirect=', ''))
  it('keeps the path and query of the request\'s own origin', () => {
    expect(loginLocation({ proto: 'https', host: 'app.example', uri: '/grafana/d/1?a=1&b=2', method: 'GET' }, [])).toBe('/auth/login?redirect=%2Fgrafana%2Fd%2F1%3Fa%3D1%26b%3D2')
    expect(at('/grafana/../admin/./x')).toBe('/admin/x')
  })
  it.each([
    ['an absolute URL elsewhere', 'https://evil.example/x', '/'],
    ['a protocol-relative URL', '//evil.example/x', '/'],
    ['a backslash trick', '/\\evil.example/x', '/'],
    ['dot segments to //host', '/.//evil.example/x', '/'],
    ['a javascript: URL', 'javascript:alert(1)', '/'],
    ['credentials in the URL', 'https://user:pw@partner.example/x', '/'],
    ['a too long URI', `/${'a'.repeat(2048)}`, '/'],
    ['a trusted origin', 'https://partner.example/report?id=7', 'https://partner.example/report?id=7'],
    ['a trusted origin\'s name followed by another domain', 'https://partner.example.evil.test/x', '/'],
    ['a trusted origin\'s host on another port', 'https://partner.example:8443/x', '/'],
    ['a trusted origin\'s host over http', 'http://partner.example/x', '/'],
    ['a subdomain of a trusted origin', 'https://evil.partner.example/x', '/'],
  ])('%s goes to %s', (_, uri, expected) => {
    expect(at(uri)).toBe(expected)
  })
  it.each([
    ['a host with a path', 'app.example/evil'],
    ['a host with credentials', 'evil@app.example'],
    ['a host that is no host', 'a b'],
  ])('%s goes home', (_, host) => {
    expect(at('/x', host)).toBe('/')
  })
  it('goes home for a scheme other than http(s)', () => {
    expect(at('/x', 'app.example', 'javascript')).toBe('/')
  })
})
