import type { AuthUser } from './types'

/** Whether the user holds the permission URI (exact string match). */
export function hasPermission(user: AuthUser | null | undefined, uri: string): boolean {
  return !!user && user.permissions.includes(uri)
}

/** Whether the user holds every URI; an empty list is allowed. */
export function hasAllPermissions(user: AuthUser | null | undefined, uris: readonly string[]): boolean {
  return !!user && uris.every(uri => user.permissions.includes(uri))
}

/** Whether the user holds at least one URI; an empty list is allowed. */
export function hasAnyPermission(user: AuthUser | null | undefined, uris: readonly string[]): boolean {
  return !!user && (uris.length === 0 || uris.some(uri => user.permissions.includes(uri)))
}

/** Whether the user has the role code. */
export function hasRoleCode(user: AuthUser | null | undefined, code: string): boolean {
  return !!user && user.roles.includes(code)
}
