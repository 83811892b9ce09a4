/**
 * Reading one APP_* value: the variable of a key, the tree overlaid with the environment, and a coercion per kind of
 * value (text, boolean, integer in a range, list, URL, Redis address, choice, port). Each failure is a
 * ConfigError naming the variable. Values may arrive parsed from the app's config ('1' the number 1, 'true' the
 * boolean), or as raw text from the environment. Pure.
 */
import { ConfigError } from './types'

/** The APP_* variable of a key path under runtimeConfig.svcGateway: ['auth', 'baseURL'] is APP_AUTH_BASE_URL. */
export function envName(path: readonly string[]): string {
  return `APP_${path.map(part => part.replace(/([a-z\d])([A-Z])/g, '$1_$2').toUpperCase()).join('_')}`
}

/**
 * A copy of the configuration tree with each leaf replaced by its APP_* variable when that is set (raw text; the
 * parsers below coerce it). Keys that are not in the tree have no variable.
 */
export function overlayEnv(tree: Record<string, unknown>, env: Record<string, string | undefined>, path: string[] = []): Record<string, unknown> {
  const copy: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(tree)) {
    const at = [...path, key]
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      copy[key] = overlayEnv(value as Record<string, unknown>, env, at)
      continue
    }
    const variable = env[envName(at)]
    copy[key] = variable === undefined ? value : variable
  }
  return copy
}

/** A string setting: numbers are turned into text, null/undefined/objects into the default. */
export function toText(value: unknown, fallback = ''): string {
  if (typeof value === 'string') return value.trim()
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return fallback
}

/** A boolean setting: true/false/1/0/yes/no/on/off/'' (false). */
export function toBool(value: unknown, variable: string): boolean {
  if (typeof value === 'boolean') return value
  if (value === undefined || value === null || value === '') return false
  const text = String(value).trim().toLowerCase()
  if (['true', '1', 'yes', 'on'].includes(text)) return true
  if (['false', '0', 'no', 'off'].includes(text)) return false
  throw new ConfigError(`${variable} phải là true hoặc false (nhận được '${String(value)}').`)
}

/** A whole number setting, at least `min` (and at most `max`, when given). '' gives the default. */
export function toInt(value: unknown, fallback: number, variable: string, min = 0, max?: number): number {
  if (value === undefined || value === null || value === '') return fallback
  const number = typeof value === 'number' ? value : Number(String(value).trim())
  if (!Number.isInteger(number) || number < min) {
    throw new ConfigError(`${variable} phải là số nguyên >= ${min} (nhận được '${String(value)}').`)
  }
  if (max !== undefined && number > max) {
    throw new ConfigError(`${variable} phải là số nguyên từ ${min} đến ${max} (nhận được '${String(value)}').`)
  }
  return number
}

/** The longest a time limit in seconds may be: past ~24.8 days Node's timers fire at once instead. */
export const MAX_LIMIT_SECONDS = 3_600

/** A comma-separated list; arrays are accepted as they are. */
export function toList(value: unknown): string[] {
  const items = Array.isArray(value) ? value.map(item => toText(item)) : toText(value).split(',')
  return items.map(item => item.trim()).filter(Boolean)
}

/**
 * A Redis address for ioredis (redis:// or rediss://, credentials percent-encoded), or '' for none. The message never
 * repeats the value: it may hold a password.
 */
export function toRedisUrl(value: unknown, variable: string): string {
  const text = toText(value)
  if (!text) return ''
  let url: URL
  try {
    url = new URL(text)
    decodeURIComponent(url.username)
    decodeURIComponent(url.password)
  }
  catch {
    throw new ConfigError(`${variable} không phải địa chỉ Redis hợp lệ (redis://[:mật-khẩu@]máy[:cổng][/số-db], ký tự đặc biệt trong mật khẩu phải mã hoá %).`)
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new ConfigError(`${variable} phải bắt đầu bằng redis:// hoặc rediss://.`)
  if (!url.hostname) throw new ConfigError(`${variable} thiếu tên máy Redis.`)
  return text
}

/** An http(s) base address without a trailing '/', or '' when empty. */
export function toBaseUrl(value: unknown, variable: string): string {
  const text = toText(value)
  if (!text) return ''
  let url: URL
  try {
    url = new URL(text)
  }
  catch {
    throw new ConfigError(`${variable} không phải địa chỉ URL hợp lệ.`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${variable} phải bắt đầu bằng http:// hoặc https://.`)
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new ConfigError(`${variable} không được chứa query, fragment hay thông tin đăng nhập.`)
  }
  return text.replace(/\/+$/, '')
}

/** An endpoint path, '' when disabled; a missing leading '/' is added. */
export function toEndpoint(value: unknown, fallback: string): string {
  const text = toText(value, fallback)
  if (!text) return ''
  return text.startsWith('/') ? text : `/${text}`
}

/** One of a fixed set of words (case-insensitive); '' gives the default. */
export function toChoice<T extends string>(value: unknown, choices: readonly T[], fallback: T, variable: string): T {
  const text = toText(value).toLowerCase()
  if (!text) return fallback
  if ((choices as readonly string[]).includes(text)) return text as T
  throw new ConfigError(`${variable} phải là một trong ${choices.join(', ')} (nhận được '${String(value)}').`)
}

/** APP_METRICS_PORT: '' (off) or a TCP port. */
export function toPort(value: unknown, variable: string): number {
  const port = toInt(value, 0, variable)
  if (port > 65_535) throw new ConfigError(`${variable} phải là số cổng từ 1 đến 65535 (nhận được '${String(value)}').`)
  return port
}
