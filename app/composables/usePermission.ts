import { hasAllPermissions, hasAnyPermission, hasPermission, hasRoleCode } from '../../shared/permissions'
import { useAuthUser } from '../lib/auth-state'

/**
 * Permission checks against the signed-in user (exact URI match). They tidy the UI only: the backend checks
 * every request itself.
 */
export function usePermission() {
  const user = useAuthUser()
  return {
    can: (uri: string) => hasPermission(user.value, uri),
    canAll: (uris: readonly string[]) => hasAllPermissions(user.value, uris),
    canAny: (uris: readonly string[]) => hasAnyPermission(user.value, uris),
    hasRole: (code: string) => hasRoleCode(user.value, code),
  }
}
