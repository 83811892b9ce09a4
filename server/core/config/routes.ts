/**
 * The routes file (APP_API_ROUTES_FILE): named /api prefixes, each with its own backend, token rule, permissions,
 * timeout, WebSocket rule, headers and, with an OpenID Provider, the audience of its own token (`resource`, `scope`).
 * Checked here, whole, at start: a field that is wrong or unknown stops the start with a message naming the entry and
 * the field. Pure (the file is read and its YAML or JSON
 * parsed by ops/routes-file.ts).
 */
import { parseAcrValues, parseMaxAge } from '../session/auth-level'
import { toBaseUrl } from './coerce'
import { ConfigError, type ApiRoute, type RouteAudience, type RouteTokenRule } from './types'

/** The fields a route may have. */
const FIELDS = ['name', 'prefix', 'target', 'token', 'permissions', 'anyPermissions', 'timeout', 'websocket', 'headers', 'resource', 'scope', 'exchange', 'acr', 'maxAge'] as const
const TOKEN_RULES: readonly RouteTokenRule[] = ['user', 'optional', 'none']
/** A route's name is a metrics label and a word of the access line: short, lower-case, bounded. */
const NAME = /^[a-z][a-z0-9_-]{0,31}$/
/** One segment of a prefix: lower-case unreserved characters only, so that no other spelling of it exists. */
const PREFIX_SEGMENT = /^[a-z0-9_~-][a-z0-9._~-]*$/
/** RFC 9110 token: a header name. */
const HEADER_NAME = /^[!#$%&'*+.^`|~\w-]+$/
/** Headers the gateway owns on a proxied request: a route cannot set them (its token rule, the framing, the hop). */
const OWN_HEADERS = new Set(['authorization', 'cookie', 'host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'upgrade', 'te', 'trailer', 'proxy-authorization', 'x-request-id', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto'])
/** RFC 6749 3.3: a scope token is printable ASCII without space, '"' or '\\'. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/
/** Routes in one file at most. */
const MAX_ROUTES = 1000
const MAX_PERMISSIONS = 32
/** The longest a route's timeout may be (ms): an hour, as the gateway's other time limits. */
const MAX_TIMEOUT_MS = 3_600_000

/** What a route falls back to for the fields it leaves out. */
export interface RouteDefaults {
  /** APP_API_PROXY_TIMEOUT (ms). */
  timeoutMs: number
  /** Whether the gateway logs in through an OpenID Provider (APP_AUTH_KIND=oidc): only then may a route have an audience. */
  oidc: boolean
}

/**
 * The routes of a parsed routes file (`{ routes: [ {...}, ... ] }`), checked. Every error names the file's variable,
 * the entry (its position and name) and the field, in Vietnamese as the other configuration errors.
 */
export function parseApiRoutes(document: unknown, defaults: RouteDefaults): ApiRoute[] {
  const fail = (message: string) => new ConfigError(`APP_API_ROUTES_FILE: ${message}`)
  if (!isRecord(document) || !Array.isArray(document.routes)) throw fail('tệp phải có khoá routes là một danh sách tuyến (routes: [ ... ]).')
  const extra = Object.keys(document).filter(key => key !== 'routes')
  if (extra.length) throw fail(`khoá không được hỗ trợ ở gốc tệp: ${extra.join(', ')} (chỉ có routes).`)
  if (document.routes.length > MAX_ROUTES) throw fail(`quá nhiều tuyến (${document.routes.length}, tối đa ${MAX_ROUTES}).`)
  const routes = document.routes.map((entry, index) => parseRoute(entry, index, defaults))
  const names = new Set<string>()
  const prefixes = new Map<string, string>()
  for (const [index, route] of routes.entries()) {
    const where = entryName(index, route.name)
    if (names.has(route.name)) throw fail(`${where}, trường name: tên '${route.name}' đã dùng cho một tuyến khác.`)
    const other = prefixes.get(route.prefix)
    if (other) throw fail(`${where}, trường prefix: '${route.prefix}' đã là prefix của tuyến '${other}'.`)
    names.add(route.name)
    prefixes.set(route.prefix, route.name)
  }
  return routes
}

function parseRoute(entry: unknown, index: number, defaults: RouteDefaults): ApiRoute {
  const named = isRecord(entry) && typeof entry.name === 'string' ? entry.name : undefined
  const fail = (field: string, message: string) => new ConfigError(`APP_API_ROUTES_FILE: ${entryName(index, named)}, trường ${field}: ${message}`)
  if (!isRecord(entry)) throw new ConfigError(`APP_API_ROUTES_FILE: ${entryName(index)} phải là một đối tượng (name, prefix, target, ...).`)
  for (const key of Object.keys(entry)) {
    if (!(FIELDS as readonly string[]).includes(key)) throw fail(key, `không có trường này (các trường: ${FIELDS.join(', ')}).`)
  }
  if (typeof entry.name !== 'string' || !NAME.test(entry.name)) throw fail('name', `bắt buộc: chữ thường, số, - hoặc _, bắt đầu bằng chữ, tối đa 32 ký tự (nhận được ${shown(entry.name)}).`)
  if (entry.name === 'default') throw fail('name', '\'default\' là tên của APP_API_PROXY_TARGET: chọn tên khác.')
  const prefix = parsePrefix(entry.prefix, message => fail('prefix', message))
  if (typeof entry.target !== 'string' || !entry.target) throw fail('target', `bắt buộc: địa chỉ http(s) của backend (nhận được ${shown(entry.target)}).`)
  let target: string
  try {
    target = toBaseUrl(entry.target, 'target')
  }
  catch (error) {
    throw fail('target', `${(error as Error).message.replace(/^target /, '')} (nhận được ${shown(entry.target)})`)
  }
  const token = entry.token === undefined ? 'user' : entry.token
  if (!TOKEN_RULES.includes(token as RouteTokenRule)) throw fail('token', `phải là một trong ${TOKEN_RULES.join(', ')} (nhận được ${shown(entry.token)}).`)
  const timeout = entry.timeout === undefined ? defaults.timeoutMs : entry.timeout
  if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1 || timeout > MAX_TIMEOUT_MS) throw fail('timeout', `phải là số nguyên mili giây từ 1 đến ${MAX_TIMEOUT_MS} (nhận được ${shown(entry.timeout)}).`)
  const websocket = entry.websocket === undefined ? true : entry.websocket
  if (typeof websocket !== 'boolean') throw fail('websocket', `phải là true hoặc false (nhận được ${shown(entry.websocket)}).`)
  const audience = parseAudience(entry, token as RouteTokenRule, defaults.oidc, fail)
  return {
    name: entry.name,
    prefix,
    target,
    token: token as RouteTokenRule,
    permissions: parsePermissions(entry.permissions, message => fail('permissions', message)),
    anyPermissions: parsePermissions(entry.anyPermissions, message => fail('anyPermissions', message)),
    timeoutMs: timeout,
    websocket,
    headers: parseHeaders(entry.headers, (field, message) => fail(field, message)),
    ...(audience ? { audience } : {}),
    ...parseStepUp(entry, fail),
  }
}

/**
 * `resource` (RFC 8707: an absolute URI without fragment) and `scope` (scope tokens separated by spaces): the audience
 * of the route's own token, which only an OpenID Provider issues, and which a route that sends no token has no use for;
 * `exchange: true` has it obtained by token exchange (RFC 8693).
 */
function parseAudience(entry: Record<string, unknown>, token: RouteTokenRule, oidc: boolean, fail: (field: string, message: string) => ConfigError): RouteAudience | undefined {
  const { resource, scope, exchange } = entry
  if (exchange !== undefined && typeof exchange !== 'boolean') throw fail('exchange', `phải là true hoặc false (nhận được ${shown(exchange)}).`)
  if (resource === undefined && scope === undefined) {
    if (exchange) throw fail('exchange', 'cần resource hoặc scope: token được đổi lấy cho audience nào.')
    return undefined
  }
  const field = resource === undefined ? 'scope' : 'resource'
  if (!oidc) throw fail(field, 'token theo audience chỉ dùng được khi đăng nhập bằng OpenID Provider (APP_AUTH_KIND=oidc); bỏ trường này.')
  if (token === 'none') throw fail(field, 'tuyến có token none không gửi token nào: bỏ trường này hoặc đổi token.')
  if (resource !== undefined && !isResourceIndicator(resource)) throw fail('resource', `phải là một URI tuyệt đối, không có fragment (#), vd. https://billing.example.com (nhận được ${shown(resource)}).`)
  let scopes: string[] | undefined
  if (scope !== undefined) {
    scopes = typeof scope === 'string' ? [...new Set(scope.split(' ').filter(Boolean))] : []
    if (!scopes.length || scopes.some(item => !SCOPE_TOKEN.test(item))) throw fail('scope', `phải là các scope cách nhau bởi dấu cách, mỗi scope gồm ký tự ASCII in được, không có " hay \\ (nhận được ${shown(scope)}).`)
  }
  const joined = scopes?.join(' ')
  return {
    ...(resource !== undefined ? { resource: resource as string } : {}),
    ...(joined !== undefined ? { scope: joined } : {}),
    key: `${resource ?? ''} ${joined ?? ''}`,
    ...(exchange ? { exchange: true as const } : {}),
  }
}

/** An absolute URI (a scheme, then no space or control character) without a fragment. */
function isResourceIndicator(value: unknown): boolean {
  // eslint-disable-next-line no-control-regex
  if (typeof value !== 'string' || value.length > 2048 || /[\u0000-\u0020\u007F#]/.test(value)) return false
  return /^[a-z][a-z0-9+.-]*:./i.test(value) && URL.canParse(value)
}

/** Step-up: `acr` (one value, space-separated values or a list: any of them), `maxAge` (seconds). */
function parseStepUp(entry: Record<string, unknown>, fail: (field: string, message: string) => ConfigError): Pick<ApiRoute, 'acr' | 'maxAge'> {
  const step: Pick<ApiRoute, 'acr' | 'maxAge'> = {}
  if (entry.acr !== undefined) {
    const acr = typeof entry.acr === 'string' ? parseAcrValues(entry.acr) : Array.isArray(entry.acr) && entry.acr.every(value => typeof value === 'string' && parseAcrValues(value)?.length === 1) ? parseAcrValues(entry.acr.join(' ')) : undefined
    if (!acr?.length) throw fail('acr', `phải là giá trị acr (chuỗi, hoặc danh sách chuỗi không có dấu cách) (nhận được ${shown(entry.acr)}).`)
    step.acr = acr
  }
  if (entry.maxAge !== undefined) {
    const maxAge = typeof entry.maxAge === 'number' ? parseMaxAge(entry.maxAge) : undefined
    if (maxAge === undefined) throw fail('maxAge', `phải là số giây nguyên từ 0 đến 31536000 (nhận được ${shown(entry.maxAge)}).`)
    step.maxAge = maxAge
  }
  return step
}

/** `/api/<segment>[/<segment>...]`: lower-case unreserved characters, no dot segment, no trailing '/'. */
function parsePrefix(value: unknown, fail: (message: string) => ConfigError): string {
  if (typeof value !== 'string') throw fail(`bắt buộc: đường dẫn dưới /api, vd. /api/billing (nhận được ${shown(value)}).`)
  const segments = value.split('/')
  if (segments[0] !== '' || segments[1] !== 'api' || segments.length < 3) throw fail(`phải bắt đầu bằng /api/ và có ít nhất một đoạn sau đó, vd. /api/billing (nhận được ${shown(value)}).`)
  const bad = segments.slice(2).find(segment => !PREFIX_SEGMENT.test(segment) || /^\.+$/.test(segment) || segment.endsWith('.'))
  if (bad !== undefined) throw fail(`mỗi đoạn chỉ gồm chữ thường, số và . _ ~ - (không có đoạn rỗng, '/' ở cuối, '.' hay '..'); đoạn ${shown(bad)} trong ${shown(value)} không hợp lệ.`)
  return value
}

function parsePermissions(value: unknown, fail: (message: string) => ConfigError): string[] {
  if (value === undefined) return []
  if (!Array.isArray(value) || value.some(item => typeof item !== 'string' || !item.trim())) throw fail(`phải là danh sách quyền (URI dạng chuỗi, không rỗng) (nhận được ${shown(value)}).`)
  if (value.length > MAX_PERMISSIONS) throw fail(`tối đa ${MAX_PERMISSIONS} quyền (nhận được ${value.length}).`)
  return value.map(item => (item as string).trim())
}

function parseHeaders(value: unknown, fail: (field: string, message: string) => ConfigError): Record<string, string> {
  if (value === undefined) return {}
  if (!isRecord(value)) throw fail('headers', `phải là bảng tên header: giá trị (nhận được ${shown(value)}).`)
  const headers: Record<string, string> = {}
  for (const [name, text] of Object.entries(value)) {
    const lower = name.toLowerCase()
    if (!HEADER_NAME.test(name)) throw fail(`headers.${name}`, 'tên header không hợp lệ.')
    if (OWN_HEADERS.has(lower) || lower.startsWith('x-forwarded-')) throw fail(`headers.${name}`, 'header này do gateway đặt (token, cookie, kết nối, địa chỉ): tuyến không được đặt.')
    // eslint-disable-next-line no-control-regex
    if (typeof text !== 'string' || /[\u0000-\u001F\u007F]/.test(text)) throw fail(`headers.${name}`, 'giá trị phải là chuỗi, không có ký tự điều khiển (xuống dòng, ...).')
    if (lower in headers) throw fail(`headers.${name}`, 'header đã có (tên header không phân biệt hoa thường).')
    headers[lower] = text
  }
  return headers
}

/** How an entry is named in a message: its position (from 1) and, when it has one, its name. */
function entryName(index: number, name?: string): string {
  return `tuyến #${index + 1}${name ? ` ('${name}')` : ''}`
}

/** A value as a message shows it: short, its JSON. */
function shown(value: unknown): string {
  const text = value === undefined ? 'không có' : JSON.stringify(value) ?? String(value)
  return text.length > 80 ? `${text.slice(0, 80)}…` : text
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
