import { describe, expect, it } from 'vitest'
import { parseGatewayConfig } from '../../server/core/config/config'
import { getByPath, mapClients, mapExpiresAt, mapIamUser, MappingLimitError, mapPermissions, mapRoles, mapToken, MAX_MAPPED_ENTRIES } from '../../server/core/iam/mapping'

const { mapping } = parseGatewayConfig({}, ['x'.repeat(32)])

const loginResponse = {
  code: 'API000',
  message: 'OK',
  body: {
    tokenData: { access_token: 'tok', expires_in: 3600 },
    userId: 42,
    fullName: 'Nguyễn Văn A',
    email: 'a@example.com',
    listRole: [{ code: 'admin', name: 'Quản trị' }, { code: 'sale', name: 'Bán hàng' }, { name: 'no code' }],
    authorization: [
      { uri: '/orders/search', type: 'web' },
      { uri: '/orders/create', type: 'web' },
      { uri: '/jobs/sync', type: 'job' },
      { uri: '/orders/search', type: 'web' },
      { type: 'web' },
    ],
  },
}

describe('getByPath', () => {
  it.each([
    ['body.tokenData.access_token', 'tok'],
    ['body.userId', 42],
    ['body.missing', undefined],
    ['body.tokenData.access_token.length', undefined],
    ['', undefined],
    ['body.listRole.0.code', 'admin'],
    ['__proto__', undefined],
    ['body.constructor', undefined],
  ])('%s -> %j', (path, expected) => {
    expect(getByPath(loginResponse, path)).toEqual(expected)
  })
  it('stops at null and non-objects', () => {
    expect(getByPath(null, 'a')).toBeUndefined()
    expect(getByPath({ a: null }, 'a.b')).toBeUndefined()
    expect(getByPath('text', 'length')).toBeUndefined()
  })
})

describe('mapIamUser with the default mapping', () => {
  it('keeps exactly the web permissions, the role codes, and text fields', () => {
    expect(mapIamUser(loginResponse, mapping)).toEqual({
      id: '42',
      name: 'Nguyễn Văn A',
      email: 'a@example.com',
      roles: ['admin', 'sale'],
      permissions: ['/orders/search', '/orders/create'],
    })
  })
  it('keeps every type when the filter is empty', () => {
    expect(mapPermissions(loginResponse, { ...mapping, permissionType: '' })).toEqual(['/orders/search', '/orders/create', '/jobs/sync'])
  })
  it('uses plain string arrays unchanged, ignoring the *_KEY settings', () => {
    const response = { body: { listRole: ['r1', 'r2'], authorization: ['/a', '/b'] } }
    expect(mapRoles(response, { ...mapping, roleKey: 'nope' })).toEqual(['r1', 'r2'])
    expect(mapPermissions(response, { ...mapping, permissionKey: 'nope', permissionType: 'web' })).toEqual(['/a', '/b'])
  })
  it('follows custom paths and keys', () => {
    const response = { data: { user: { perms: [{ path: '/x', kind: 'ui' }, { path: '/y', kind: 'api' }], roles: [{ id: 'R' }] } } }
    const custom = { ...mapping, permissions: 'data.user.perms', permissionKey: 'path', permissionTypeKey: 'kind', permissionType: 'ui', roles: 'data.user.roles', roleKey: 'id' }
    expect(mapPermissions(response, custom)).toEqual(['/x'])
    expect(mapRoles(response, custom)).toEqual(['R'])
  })
  it('gives empty lists when the mapping points nowhere', () => {
    expect(mapIamUser({}, mapping)).toEqual({ id: '', name: '', email: '', roles: [], permissions: [] })
  })
  it('takes fields missing from user-info out of the login response', () => {
    const userInfo = { code: 'API000', body: { userId: 'u1', authorization: [{ uri: '/fresh', type: 'web' }] } }
    const user = mapIamUser(userInfo, mapping, loginResponse)
    expect(user).toEqual({ id: 'u1', name: 'Nguyễn Văn A', email: 'a@example.com', roles: ['admin', 'sale'], permissions: ['/fresh'] })
  })
})

describe('long lists', () => {
  const plain = parseGatewayConfig({ auth: { mapping: { permissions: 'p', roles: 'r' } } }, ['s'.repeat(32)]).mapping

  it('keeps each code once, in first-seen order, up to 10,000 entries', () => {
    const list = Array.from({ length: MAX_MAPPED_ENTRIES }, (_, i) => `/p/${i % 5_000}`)
    const permissions = mapPermissions({ p: list }, plain)
    expect(permissions).toHaveLength(5_000)
    expect(permissions.slice(0, 3)).toEqual(['/p/0', '/p/1', '/p/2'])
    expect(mapRoles({ r: ['a', 'b', 'a', '', 7, null, 'b'] }, plain)).toEqual(['a', 'b', '7'])
  })

  it('refuses a list of more than 10,000 entries, naming it', () => {
    const list = Array.from({ length: MAX_MAPPED_ENTRIES + 1 }, (_, i) => `/p/${i}`)
    expect(() => mapPermissions({ p: list }, plain)).toThrow(MappingLimitError)
    expect(() => mapIamUser({ r: list }, plain)).toThrow(expect.objectContaining({ list: 'roles', count: 10_001 }))
  })
})

describe('token, expiry, clients', () => {
  it('reads the token and expiresAt (ms)', () => {
    expect(mapToken(loginResponse, mapping)).toBe('tok')
    expect(mapToken({ body: {} }, mapping)).toBe('')
    expect(mapToken({ body: { tokenData: { access_token: 12 } } }, mapping)).toBe('')
    expect(mapExpiresAt(loginResponse, mapping, 1_000)).toBe(3_601_000)
    expect(mapExpiresAt({ body: { tokenData: { expires_in: '60' } } }, mapping, 0)).toBe(60_000)
    expect(mapExpiresAt({ body: {} }, mapping, 0)).toBeUndefined()
    expect(mapExpiresAt({ body: { tokenData: { expires_in: 'soon' } } }, mapping, 0)).toBeUndefined()
  })
  it('keeps only clients with id, code and name, as strings', () => {
    const response = { body: [
      { id: 1, code: 'APP1', name: 'Ứng dụng 1' },
      { id: 2, code: 'APP2' },
      { code: 'APP3', name: 'no id' },
      { id: 4, code: '', name: 'empty code' },
      'junk', null,
      { id: '5', code: 'APP5', name: 'Ứng dụng 5', extra: true },
    ] }
    expect(mapClients(response, mapping)).toEqual([
      { id: '1', code: 'APP1', name: 'Ứng dụng 1' },
      { id: '5', code: 'APP5', name: 'Ứng dụng 5' },
    ])
    expect(mapClients({ body: { not: 'a list' } }, mapping)).toEqual([])
  })
})
