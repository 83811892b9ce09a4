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

export const MOCK_CLIENTS: readonly AuthClientOption[] = [
  { id: 'mock-1', code: 'MOCK_APP_1', name: 'Ứng dụng mẫu 1' },
  { id: 'mock-2', code: 'MOCK_APP_2', name: 'Ứng dụng mẫu 2' },
]
