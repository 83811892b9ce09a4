import { describe, expect, it } from 'vitest'
import { parseGatewayConfig } from '../../server/core/config/config'
import { parseMockUser } from '../../server/core/config/mock-user'
import { ConfigError } from '../../server/core/config/types'
import { mockUser } from '../../server/core/iam/mock'

const SECRET = 'x'.repeat(32)

describe('APP_AUTH_MOCK_USER', () => {
  it('keeps the contract\'s mock user when empty', () => {
    expect(parseMockUser('')).toEqual({})
    expect(parseMockUser(undefined)).toEqual({})
    expect(mockUser('alice', parseMockUser(''))).toEqual({
      id: 'mock-user',
      name: 'Người dùng alice',
      email: 'alice@mock.local',
      roles: ['admin'],
      permissions: ['/orders/search', '/orders/create', '/orders/update'],
    })
  })

  it('puts the fields it sets over the contract\'s, the others left as they are', () => {
    const fields = parseMockUser('{"name":"Lê Kế Toán","roles":["accountant"],"permissions":["/invoices/search"]}')
    expect(mockUser('alice', fields)).toEqual({
      id: 'mock-user',
      name: 'Lê Kế Toán',
      email: 'alice@mock.local',
      roles: ['accountant'],
      permissions: ['/invoices/search'],
    })
    const whole = { id: 'u-1', name: 'A', email: 'a@x.vn', roles: [], permissions: ['/a'] }
    expect(mockUser('bob', parseMockUser(JSON.stringify(whole)))).toEqual(whole)
    // A value the app's config hands over already parsed.
    expect(parseMockUser({ permissions: ['/b'] })).toEqual({ permissions: ['/b'] })
  })

  it.each([
    ['{"permissions":', /^APP_AUTH_MOCK_USER không phải JSON hợp lệ \(/],
    ['["/orders/search"]', /^APP_AUTH_MOCK_USER phải là một đối tượng JSON với các trường id, name, email, roles, permissions\.$/],
    ['"admin"', /^APP_AUTH_MOCK_USER phải là một đối tượng JSON/],
    ['null', /^APP_AUTH_MOCK_USER phải là một đối tượng JSON/],
    ['{"permission":["/a"]}', /^APP_AUTH_MOCK_USER: không có trường 'permission' \(chỉ có id, name, email, roles, permissions\)\.$/],
    ['{"id":""}', /^APP_AUTH_MOCK_USER: trường 'id' phải là chuỗi không rỗng\.$/],
    ['{"id":7}', /^APP_AUTH_MOCK_USER: trường 'id' phải là chuỗi không rỗng\.$/],
    ['{"email":null}', /^APP_AUTH_MOCK_USER: trường 'email' phải là chuỗi\.$/],
    ['{"roles":"admin"}', /^APP_AUTH_MOCK_USER: trường 'roles' phải là mảng chuỗi/],
    ['{"permissions":["/a",1]}', /^APP_AUTH_MOCK_USER: trường 'permissions' phải là mảng chuỗi/],
  ])('refuses %s, naming the variable and the field', (value, message) => {
    expect(() => parseMockUser(value)).toThrow(ConfigError)
    expect(() => parseMockUser(value)).toThrow(message)
  })

  it('is read in mock mode only: a value that is never used stops no start', () => {
    const user = '{"permission":[]}'
    expect(parseGatewayConfig({ auth: { mock: 'false', mockUser: user } }, [SECRET]).mockUser).toEqual({})
    expect(() => parseGatewayConfig({ auth: { mock: 'true', mockUser: user } }, [SECRET])).toThrow(/APP_AUTH_MOCK_USER: không có trường 'permission'/)
    expect(parseGatewayConfig({ auth: { mock: 'true', mockUser: '{"roles":["x"]}' } }, [SECRET]).mockUser).toEqual({ roles: ['x'] })
  })
})
