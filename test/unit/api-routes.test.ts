import { describe, expect, it } from 'vitest'
import { parseApiRoutes } from '../../server/core/config/routes'
import { routerPath } from '../../server/core/http/route-match'
import { backendPath } from '../../server/core/proxy/api-path'
import { createRouteChooser } from '../../server/core/proxy/route-choice'
import { REFUSED_PATHS, SENT_PATHS } from './api-path-corpus'

const DEFAULTS = { timeoutMs: 60_000, oidc: false }
const OIDC = { timeoutMs: 60_000, oidc: true }

describe('parseApiRoutes', () => {
  it('reads each route with its defaults: token user, the proxy\'s timeout, tunnels on, no permissions or headers', () => {
    expect(parseApiRoutes({ routes: [
      { name: 'orders', prefix: '/api/orders', target: 'http://orders.internal:8080/v1/' },
      { name: 'cms', prefix: '/api/cms/public', target: 'https://cms.example', token: 'none', timeout: 5000, websocket: false, headers: { 'X-Tenant': 'north' }, anyPermissions: ['/cms/read'], permissions: [' /cms/view '] },
    ] }, DEFAULTS)).toEqual([
      { name: 'orders', prefix: '/api/orders', target: 'http://orders.internal:8080/v1', token: 'user', permissions: [], anyPermissions: [], timeoutMs: 60_000, websocket: true, headers: {} },
      { name: 'cms', prefix: '/api/cms/public', target: 'https://cms.example', token: 'none', permissions: ['/cms/view'], anyPermissions: ['/cms/read'], timeoutMs: 5000, websocket: false, headers: { 'x-tenant': 'north' } },
    ])
    expect(parseApiRoutes({ routes: [] }, DEFAULTS)).toEqual([])
  })

  const route = (fields: Record<string, unknown>) => ({ routes: [{ name: 'ok', prefix: '/api/ok', target: 'http://ok.test' }, { name: 'billing', prefix: '/api/billing', target: 'http://billing.test', ...fields }] })

  it.each([
    [[], 'APP_API_ROUTES_FILE: tệp phải có khoá routes là một danh sách tuyến (routes: [ ... ]).'],
    [{ routes: {} }, 'APP_API_ROUTES_FILE: tệp phải có khoá routes là một danh sách tuyến (routes: [ ... ]).'],
    [{ routes: [], route: [] }, 'APP_API_ROUTES_FILE: khoá không được hỗ trợ ở gốc tệp: route (chỉ có routes).'],
    [{ routes: ['x'] }, 'APP_API_ROUTES_FILE: tuyến #1 phải là một đối tượng (name, prefix, target, ...).'],
    [route({ resource: 'https://billing.example' }), 'APP_API_ROUTES_FILE: tuyến #2 (\'billing\'), trường resource: token theo audience chỉ dùng được khi đăng nhập bằng OpenID Provider (APP_AUTH_KIND=oidc); bỏ trường này.'],
    [route({ scope: 'billing.read' }), 'APP_API_ROUTES_FILE: tuyến #2 (\'billing\'), trường scope: token theo audience chỉ dùng được khi đăng nhập bằng OpenID Provider (APP_AUTH_KIND=oidc); bỏ trường này.'],
    [route({ permission: ['/a'] }), 'APP_API_ROUTES_FILE: tuyến #2 (\'billing\'), trường permission: không có trường này (các trường: name, prefix, target, token, permissions, anyPermissions, timeout, websocket, headers, resource, scope, exchange, acr, maxAge).'],
    [route({ name: 'Billing' }), 'APP_API_ROUTES_FILE: tuyến #2 (\'Billing\'), trường name: bắt buộc: chữ thường, số, - hoặc _, bắt đầu bằng chữ, tối đa 32 ký tự (nhận được "Billing").'],
    [route({ name: 'default' }), 'APP_API_ROUTES_FILE: tuyến #2 (\'default\'), trường name: \'default\' là tên của APP_API_PROXY_TARGET: chọn tên khác.'],
    [route({ name: 'ok' }), 'APP_API_ROUTES_FILE: tuyến #2 (\'ok\'), trường name: tên \'ok\' đã dùng cho một tuyến khác.'],
    [route({ prefix: '/api/ok' }), 'APP_API_ROUTES_FILE: tuyến #2 (\'billing\'), trường prefix: \'/api/ok\' đã là prefix của tuyến \'ok\'.'],
    [route({ prefix: '/billing' }), 'APP_API_ROUTES_FILE: tuyến #2 (\'billing\'), trường prefix: phải bắt đầu bằng /api/ và có ít nhất một đoạn sau đó, vd. /api/billing (nhận được "/billing").'],
    [route({ prefix: '/api' }), 'APP_API_ROUTES_FILE: tuyến #2 (\'billing\'), trường prefix: phải bắt đầu bằng /api/ và có ít nhất một đoạn sau đó, vd. /api/billing (nhận được "/api").'],
    [route({ prefix: '/api/billing/' }), 'APP_API_ROUTES_FILE: tuyến #2 (\'billing\'), trường prefix: mỗi đoạn chỉ gồm chữ thường, số và . _ ~ - (không có đoạn rỗng, \'/\' ở cuối, \'.\' hay \'..\'); đoạn "" trong "/api/billing/" không hợp lệ.'],
    [route({ prefix: '/api/Billing' }), /trường prefix: mỗi đoạn .*; đoạn "Billing" trong "\/api\/Billing" không hợp lệ\.$/],
    [route({ prefix: '/api/a/../billing' }), /trường prefix: mỗi đoạn .*; đoạn "\.\." trong/],
    [route({ prefix: '/api/bill%69ng' }), /trường prefix: mỗi đoạn .*; đoạn "bill%69ng" trong/],
    [route({ prefix: '/api/billing;v=1' }), /trường prefix: mỗi đoạn .*; đoạn "billing;v=1" trong/],
    [route({ target: undefined }), 'APP_API_ROUTES_FILE: tuyến #2 (\'billing\'), trường target: bắt buộc: địa chỉ http(s) của backend (nhận được không có).'],
    [route({ target: 'billing.test' }), 'APP_API_ROUTES_FILE: tuyến #2 (\'billing\'), trường target: không phải địa chỉ URL hợp lệ. (nhận được "billing.test")'],
    [route({ target: 'ftp://billing.test' }), 'APP_API_ROUTES_FILE: tuyến #2 (\'billing\'), trường target: phải bắt đầu bằng http:// hoặc https://. (nhận được "ftp://billing.test")'],
    [route({ target: 'http://u:p@billing.test' }), /trường target: không được chứa query, fragment hay thông tin đăng nhập\./],
    [route({ token: 'bearer' }), 'APP_API_ROUTES_FILE: tuyến #2 (\'billing\'), trường token: phải là một trong user, optional, none (nhận được "bearer").'],
    [route({ timeout: '30s' }), 'APP_API_ROUTES_FILE: tuyến #2 (\'billing\'), trường timeout: phải là số nguyên mili giây từ 1 đến 3600000 (nhận được "30s").'],
    [route({ timeout: 0 }), /trường timeout: phải là số nguyên mili giây từ 1 đến 3600000 \(nhận được 0\)\./],
    [route({ websocket: 'yes' }), 'APP_API_ROUTES_FILE: tuyến #2 (\'billing\'), trường websocket: phải là true hoặc false (nhận được "yes").'],
    [route({ permissions: '/billing/read' }), 'APP_API_ROUTES_FILE: tuyến #2 (\'billing\'), trường permissions: phải là danh sách quyền (URI dạng chuỗi, không rỗng) (nhận được "/billing/read").'],
    [route({ anyPermissions: [''] }), /trường anyPermissions: phải là danh sách quyền/],
    [route({ headers: ['x-a: 1'] }), /trường headers: phải là bảng tên header: giá trị/],
    [route({ headers: { Authorization: 'Bearer static' } }), 'APP_API_ROUTES_FILE: tuyến #2 (\'billing\'), trường headers.Authorization: header này do gateway đặt (token, cookie, kết nối, địa chỉ): tuyến không được đặt.'],
    [route({ headers: { 'X-Forwarded-Prefix': '/x' } }), /trường headers\.X-Forwarded-Prefix: header này do gateway đặt/],
    [route({ headers: { 'x-a': 'one\r\nx-b: two' } }), 'APP_API_ROUTES_FILE: tuyến #2 (\'billing\'), trường headers.x-a: giá trị phải là chuỗi, không có ký tự điều khiển (xuống dòng, ...).'],
    [route({ headers: { 'x a': '1' } }), /trường headers\.x a: tên header không hợp lệ\./],
  ])('refuses %j, naming the entry and the field', (document, message) => {
    expect(() => parseApiRoutes(document, DEFAULTS)).toThrow(message)
  })

  it('with an OpenID Provider, reads a route\'s audience: resource and/or scope (each scope once), keyed by both', () => {
    const [billing, reports, both] = parseApiRoutes({ routes: [
      { name: 'billing', prefix: '/api/billing', target: 'http://billing.internal', resource: 'https://billing.example.com/' },
      { name: 'reports', prefix: '/api/reports', target: 'http://reports.internal', token: 'optional', scope: ' reports:read  api://reports/.default reports:read ' },
      { name: 'both', prefix: '/api/both', target: 'http://both.internal', resource: 'urn:example:both', scope: 'both.read' },
    ] }, OIDC)
    expect(billing!.audience).toEqual({ resource: 'https://billing.example.com/', key: 'https://billing.example.com/ ' })
    expect(reports!.audience).toEqual({ scope: 'reports:read api://reports/.default', key: ' reports:read api://reports/.default' })
    expect(both!.audience).toEqual({ resource: 'urn:example:both', scope: 'both.read', key: 'urn:example:both both.read' })
    expect(parseApiRoutes(route({}), OIDC)[1]).not.toHaveProperty('audience')
    expect(parseApiRoutes(route({ resource: 'https://billing.example', exchange: true }), OIDC)[1]!.audience).toEqual({ resource: 'https://billing.example', key: 'https://billing.example ', exchange: true })
    expect(parseApiRoutes(route({ scope: 'billing.read', exchange: false }), OIDC)[1]!.audience).toEqual({ scope: 'billing.read', key: ' billing.read' })
  })

  it.each([
    [route({ resource: 'https://billing.example', token: 'none' }), 'APP_API_ROUTES_FILE: tuyến #2 (\'billing\'), trường resource: tuyến có token none không gửi token nào: bỏ trường này hoặc đổi token.'],
    [route({ scope: 'billing.read', token: 'none' }), /tuyến #2 \('billing'\), trường scope: tuyến có token none không gửi token nào/],
    [route({ resource: '/billing' }), 'APP_API_ROUTES_FILE: tuyến #2 (\'billing\'), trường resource: phải là một URI tuyệt đối, không có fragment (#), vd. https://billing.example.com (nhận được "/billing").'],
    [route({ resource: 'https://billing.example#x' }), /trường resource: phải là một URI tuyệt đối, không có fragment/],
    [route({ resource: 'https://billing example' }), /trường resource: phải là một URI tuyệt đối/],
    [route({ resource: ['https://a.example', 'https://b.example'] }), /trường resource: phải là một URI tuyệt đối/],
    [route({ scope: '' }), 'APP_API_ROUTES_FILE: tuyến #2 (\'billing\'), trường scope: phải là các scope cách nhau bởi dấu cách, mỗi scope gồm ký tự ASCII in được, không có " hay \\ (nhận được "").'],
    [route({ scope: ['billing.read'] }), /trường scope: phải là các scope cách nhau bởi dấu cách/],
    [route({ scope: 'billing."read"' }), /trường scope: phải là các scope/],
    [route({ scope: 'billing\tread' }), /trường scope: phải là các scope/],
    [route({ resource: 'https://billing.example', exchange: 'yes' }), 'APP_API_ROUTES_FILE: tuyến #2 (\'billing\'), trường exchange: phải là true hoặc false (nhận được "yes").'],
    [route({ exchange: true }), 'APP_API_ROUTES_FILE: tuyến #2 (\'billing\'), trường exchange: cần resource hoặc scope: token được đổi lấy cho audience nào.'],
  ])('with an OpenID Provider, refuses the audience %j, naming the entry and the field', (document, message) => {
    expect(() => parseApiRoutes(document, OIDC)).toThrow(message)
  })
})

interface Backend { name: string, prefix: string, base: string }
const ORDERS: Backend = { name: 'orders', prefix: '/api/orders', base: '/o' }
const BILLING: Backend = { name: 'billing', prefix: '/api/billing', base: '/b' }
const BILLING_ADMIN: Backend = { name: 'billing-admin', prefix: '/api/billing/admin', base: '/ba' }
const DEFAULT: Backend = { name: 'default', prefix: '/api', base: '/d' }

/** What the proxy does with a raw URL, routes and default alike: `<name> <backend path>`, or 'refused' (400). */
function served(rawUrl: string, routes: Backend[] = [ORDERS, BILLING]): string {
  const route = createRouteChooser(routes)(routerPath(rawUrl))
  if (route === null) return 'refused'
  const backend = route ?? DEFAULT
  const path = backendPath(rawUrl, backend.base, backend.prefix)
  return path === null ? 'refused' : `${backend.name} ${path}`
}

describe('routes: the backend of a path', () => {
  it.each([
    ['/api/orders', 'orders /o'],
    ['/api/orders/', 'orders /o/'],
    ['/api/orders?x=1', 'orders /o?x=1'],
    ['/api/orders/42/items?x=%2F', 'orders /o/42/items?x=%2F'],
    ['/api/billing/invoices', 'billing /b/invoices'],
    ['/api/billing/admin/x', 'billing-admin /ba/x'],
    ['/api/billing/adminx', 'billing /b/adminx'],
    ['/api/billingx/y', 'default /d/billingx/y'],
    ['/api/order', 'default /d/order'],
    ['/api/other/orders', 'default /d/other/orders'],
    ['/api', 'default /d'],
    ['/api/orders/ABC-42', 'orders /o/ABC-42'],
  ])('%s → %s (the longest prefix on whole segments)', (url, expected) => {
    expect(served(url, [ORDERS, BILLING, BILLING_ADMIN])).toBe(expected)
  })

  it('costs one Map probe a segment of the longest prefix, whatever the number of routes: 100 routes choose as 2 do', () => {
    const many = Array.from({ length: 100 }, (_, index) => ({ name: `r${index}`, prefix: `/api/r${index}/v${index % 3}`, base: `/r${index}` }))
    expect(served('/api/r57/v0/x', [...many, ORDERS])).toBe('r57 /r57/x')
    expect(served('/api/r57/v1/x', [...many, ORDERS])).toBe('default /d/r57/v1/x')
    expect(served('/api/orders/x', [...many, ORDERS])).toBe('orders /o/x')
  })

  // Spellings one route's backend (or the default's) may read as another route's path: refused, never sent.
  it.each([
    '/api/billing/../orders', '/api/billing/../orders/x', '/api/billing/%2e%2e/orders', '/api/billing/%2E%2E/orders',
    '/api/billing/.%2e/orders', '/api/billing/%252e%252e/orders', '/api/billing/..%2forders', '/api/billing/..%5corders',
    '/api/billing\\..\\orders', '/api/billing/..;/orders', '/api/billing/%2e%2e;x/orders', '/api/billing/．．/orders',
    '/api//orders/x', '/api///orders', '/api/orders;x/y', '/api/orders;/y', '/api/ORDERS/x', '/api/Orders', '/api/orders%2Fx',
    '/api/orders%2fx', '/api/orders\\x', '/api/%6Frders/x', '/api/orders%3F/../billing', '/api/orders%3Fx', '/api/billing%2F..%2Forders',
    '/api/%2e%2e/billing', '/api/x/../billing/y', '/api/billing/x/../../orders', '/api/billing%252F..%252Forders',
    '/api/billing%00/x', '/api/billing%20/x', '/api/billing./x', '/api/billing%2e/x',
  ])('refuses %s (it could reach another route\'s backend)', (url) => {
    expect(served(url)).toBe('refused')
  })

  // The proxy's hostile corpus, written under each route: refused under every one, as under /api alone.
  it.each(REFUSED_PATHS.filter(url => url.startsWith('/api/')).flatMap(url => [ORDERS, BILLING].map(route => [`${route.prefix}${url.slice(4)}`, route.name])))('refuses %s (under %s)', (url) => {
    expect(served(url)).toBe('refused')
  })

  it.each(SENT_PATHS.filter(([url]) => url.startsWith('/api')).flatMap(([url]) => [ORDERS, BILLING].map(route => [`${route.prefix}${url.slice(4)}`, route] as const)))('sends %s to its own route\'s backend, under its base path', (url, route) => {
    const answer = served(url)
    expect(answer.startsWith(`${route.name} ${route.base}`)).toBe(true)
    expect(answer).toBe(`${route.name} ${backendPath(url, route.base, route.prefix)}`)
  })
})
