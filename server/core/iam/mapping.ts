/**
 * Turning IAM responses into gateway values, driven by the dot-path mapping of the configuration.
 * Pure: no h3 or Nitro imports.
 */
import type { AuthClientOption, AuthUser } from '../../../shared/types'
import type { IamMapping } from '../config/types'

/** The value at a dot-path from the JSON root ('body.tokenData.access_token'); undefined when any step is missing. */
export function getByPath(source: unknown, path: string): unknown {
  if (!path) return undefined
  let current: unknown = source
  for (const key of path.split('.')) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return undefined
    current = (current as Record<string, unknown>)[key]
  }
  return current
}

/** A string or number as text; anything else is ''. */
export function toScalarText(value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  return ''
}

/**
 * The most entries an IAM's roles or permissions list may hold for one user (real IAMs give tens to hundreds; the
 * session cookie keeps none of a long list anyway). A longer list is refused, never worked through.
 */
export const MAX_MAPPED_ENTRIES = 10_000

/** An IAM list longer than MAX_MAPPED_ENTRIES. */
export class MappingLimitError extends Error {
  override name = 'MappingLimitError'
  constructor(readonly list: 'roles' | 'permissions', readonly count: number) {
    super(`${list}: ${count} entries, more than ${MAX_MAPPED_ENTRIES}`)
  }
}

/**
 * Codes out of a list of strings, or of objects read at `key`; empty and non-text entries are dropped, repeats kept
 * once (in first-seen order, linear time). Raises MappingLimitError for a list over MAX_MAPPED_ENTRIES.
 */
function pickCodes(what: 'roles' | 'permissions', list: unknown, key: string, keep: (entry: Record<string, unknown>) => boolean = () => true): string[] {
  if (!Array.isArray(list)) return []
  if (list.length > MAX_MAPPED_ENTRIES) throw new MappingLimitError(what, list.length)
  const codes = new Set<string>()
  for (const entry of list) {
    const code = entry !== null && typeof entry === 'object'
      ? (keep(entry as Record<string, unknown>) ? toScalarText((entry as Record<string, unknown>)[key]) : '')
      : toScalarText(entry)
    if (code) codes.add(code)
  }
  return [...codes]
}

/** Role codes at mapping.roles (strings, or objects read at mapping.roleKey). */
export function mapRoles(response: unknown, mapping: IamMapping): string[] {
  return pickCodes('roles', getByPath(response, mapping.roles), mapping.roleKey)
}

/**
 * Permission URIs at mapping.permissions: plain strings as they are; objects read at mapping.permissionKey,
 * kept only when their mapping.permissionTypeKey equals mapping.permissionType ('' keeps all).
 */
export function mapPermissions(response: unknown, mapping: IamMapping): string[] {
  const type = mapping.permissionType
  return pickCodes('permissions', getByPath(response, mapping.permissions), mapping.permissionKey,
    entry => !type || toScalarText(entry[mapping.permissionTypeKey]) === type)
}

/** Whether the response holds a value at the path (used for the fallback to the login response). */
function has(response: unknown, path: string): boolean {
  const value = getByPath(response, path)
  return value !== undefined && value !== null
}

/**
 * The user built with the mapping from the user-info response; a field missing there is taken from
 * the login response (when given).
 */
export function mapIamUser(userInfo: unknown, mapping: IamMapping, login?: unknown): AuthUser {
  const from = (path: string) => (has(userInfo, path) || login === undefined ? userInfo : login)
  return {
    id: toScalarText(getByPath(from(mapping.id), mapping.id)),
    name: toScalarText(getByPath(from(mapping.name), mapping.name)),
    email: toScalarText(getByPath(from(mapping.email), mapping.email)),
    roles: mapRoles(from(mapping.roles), mapping),
    permissions: mapPermissions(from(mapping.permissions), mapping),
  }
}

/** The access token at mapping.token, or '' when absent. */
export function mapToken(response: unknown, mapping: IamMapping): string {
  const token = getByPath(response, mapping.token)
  return typeof token === 'string' ? token.trim() : ''
}

/** expiresAt in ms since the epoch from mapping.expiresIn (seconds), or undefined when absent or not a number. */
export function mapExpiresAt(response: unknown, mapping: IamMapping, now: number): number | undefined {
  const raw = getByPath(response, mapping.expiresIn)
  const seconds = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0) return undefined
  return now + Math.round(seconds * 1000)
}

/** Applications at mapping.clients; only entries with id, code and name (strings or numbers) are kept. */
export function mapClients(response: unknown, mapping: IamMapping): AuthClientOption[] {
  const list = getByPath(response, mapping.clients)
  if (!Array.isArray(list)) return []
  const clients: AuthClientOption[] = []
  for (const entry of list) {
    if (entry === null || typeof entry !== 'object') continue
    const id = toScalarText(getByPath(entry, mapping.clientId))
    const code = toScalarText(getByPath(entry, mapping.clientCode))
    const name = toScalarText(getByPath(entry, mapping.clientName))
    if (id && code && name) clients.push({ id, code, name })
  }
  return clients
}
