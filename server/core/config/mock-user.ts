/**
 * APP_AUTH_MOCK_USER: the mock mode's user as a team sets it, a JSON object with any of id, name, email, roles and
 * permissions (core/iam/mock.ts puts them over the contract's mock user). Pure.
 */
import { ConfigError, type MockUserFields } from './types'

const VARIABLE = 'APP_AUTH_MOCK_USER'
const TEXT_FIELDS = ['id', 'name', 'email'] as const
const LIST_FIELDS = ['roles', 'permissions'] as const
const FIELDS: readonly string[] = [...TEXT_FIELDS, ...LIST_FIELDS]

/**
 * The fields of APP_AUTH_MOCK_USER ({} when it is empty: the contract's mock user). Raises a ConfigError naming the
 * variable, and the field when one is wrong: not JSON, not an object, a field it does not have (a misspelt
 * `permission` would otherwise leave the default permissions without a word), a text that is not a string (an empty
 * id), a list that is not an array of strings.
 */
export function parseMockUser(value: unknown): MockUserFields {
  if (value === undefined || value === null || value === '') return {}
  let parsed: unknown = value
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value)
    }
    catch (error) {
      throw new ConfigError(`${VARIABLE} không phải JSON hợp lệ (${(error as Error).message}).`)
    }
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`${VARIABLE} phải là một đối tượng JSON với các trường ${FIELDS.join(', ')}.`)
  }
  const fields = parsed as Record<string, unknown>
  const unknown = Object.keys(fields).find(key => !FIELDS.includes(key))
  if (unknown !== undefined) throw new ConfigError(`${VARIABLE}: không có trường '${unknown}' (chỉ có ${FIELDS.join(', ')}).`)
  const user: MockUserFields = {}
  for (const field of TEXT_FIELDS) {
    const text = fields[field]
    if (text === undefined) continue
    if (typeof text !== 'string' || (field === 'id' && !text.trim())) {
      throw new ConfigError(`${VARIABLE}: trường '${field}' phải là chuỗi${field === 'id' ? ' không rỗng' : ''}.`)
    }
    user[field] = text
  }
  for (const field of LIST_FIELDS) {
    const list = fields[field]
    if (list === undefined) continue
    if (!Array.isArray(list) || !list.every(item => typeof item === 'string')) {
      throw new ConfigError(`${VARIABLE}: trường '${field}' phải là mảng chuỗi (vd. ["/orders/search"]).`)
    }
    user[field] = [...list]
  }
  return user
}
