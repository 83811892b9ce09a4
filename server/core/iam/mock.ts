/** The mock mode's fixed answers (APP_AUTH_MOCK=true): no IAM is called. Pure. */
import type { AuthClientOption, AuthUser } from '../../../shared/types'
import type { MockUserFields } from '../config/types'

export const MOCK_TRANSACTION_ID = 'mock-transaction'

/** The mock user for any account: the contract's, with the fields APP_AUTH_MOCK_USER sets in place of its own. */
export function mockUser(username: string, configured: MockUserFields = {}): AuthUser {
  return {
    id: 'mock-user',
    name: `Người dùng ${username}`,
    email: `${username}@mock.local`,
    roles: ['admin'],
    permissions: ['/orders/search', '/orders/create', '/orders/update'],
    ...configured,
  }
}

/**
 * A mock session's user as the routes answer it: the cookie's copy, with the roles and permissions of the mock user
 * (the same for every account in mock mode, so no session needs to carry them). A cookie over its 4 KB budget drops
 * them (core/session/budget.ts); a large APP_AUTH_MOCK_USER would otherwise lose its permissions in every session.
 */
export function mockSessionUser(stored: AuthUser, configured: MockUserFields = {}): AuthUser {
  const { roles, permissions } = mockUser('', configured)
  return { ...stored, roles, permissions }
}

export const MOCK_CLIENTS: readonly AuthClientOption[] = [
  { id: 'mock-1', code: 'MOCK_APP_1', name: 'Ứng dụng mẫu 1' },
  { id: 'mock-2', code: 'MOCK_APP_2', name: 'Ứng dụng mẫu 2' },
]
