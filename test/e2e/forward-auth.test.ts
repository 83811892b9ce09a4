import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningGateway } from '../support/gateway'
import { useBrowserStack } from '../support/browser'
import { startCaddy, startNginx, type FrontProxy } from '../support/front-proxy'
import { postLogin, sessionCookieOf } from '../support/login'
import { rawRequest } from '../support/raw-http'

// Real nginx and Caddy in front of the built gateway and a protected service (the echo backend, which answers with
// the headers it received), each run from its file in deploy/ as the README shows it. The gateway trusts loopback,
// where both proxies connect from.
const stack = useBrowserStack({ backend: 'echo', gateway: { APP_TRUST_PROXY: 'loopback' } })
const proxies: Partial<Record<FrontProxy['name'], FrontProxy>> = {}

beforeAll(async () => {
  const addresses = { gateway: new URL(stack.gateway.url).host, service: new URL(stack.echo.url).host }
  // Each kept as soon as it is up, so that afterAll stops the one that started when the other did not.
  const started = await Promise.allSettled([
    startNginx(addresses).then(proxy => proxies.nginx = proxy),
    startCaddy(addresses).then(proxy => proxies.caddy = proxy),
  ])
  for (const result of started) if (result.status === 'rejected') throw result.reason
})
afterAll(async () => {
  await Promise.all(Object.values(proxies).map(proxy => proxy.stop()))
})

const NAVIGATION = { 'accept': 'text/html,application/xhtml+xml', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' }
const PAGE = '/grafana/d/1?from=now-6h&to=now'

/** Logs in through the proxy (the gateway behind it) and returns the session cookie pair. */
async function loginThrough(proxy: FrontProxy, username: string, password: string): Promise<string> {
  const answer = await postLogin({ url: proxy.url } as RunningGateway, { username, password })
  expect(answer.status).toBe(200)
  return sessionCookieOf(answer)
}

describe.each(['nginx', 'caddy'] as const)('forward auth behind %s (deploy/ as the README shows it)', (name) => {
  const proxy = () => proxies[name]!

  it('sends a browser navigation without a session to the login page, with the page it asked for, the service untouched', async () => {
    const before = stack.echo.received.length
    const answer = await rawRequest(`${proxy().url}${PAGE}`, { headers: NAVIGATION })
    expect(answer.status).toBe(302)
    expect(answer.headers.location).toBe(`/auth/login?redirect=${encodeURIComponent(PAGE)}`)
    // A script's request is refused with the gateway's 401.
    const script = await rawRequest(`${proxy().url}${PAGE}`, { headers: { 'accept': 'application/json', 'sec-fetch-mode': 'cors' } })
    expect(script.status).toBe(401)
    expect(JSON.parse(script.body)).toMatchObject({ statusCode: 401, statusMessage: 'Chưa đăng nhập hoặc phiên đăng nhập đã hết hạn.' })
    expect(stack.echo.received.length).toBe(before)
  })

  it('lets a session holding the permission through with the user\'s headers, never the client\'s, never the session cookie', async () => {
    const cookie = await loginThrough(proxy(), 'ops', 'ops123')
    const answer = await rawRequest(`${proxy().url}/grafana/api/search?q=x`, {
      headers: {
        'cookie': `grafana_session=g1; ${cookie}; theme=dark`,
        'x-auth-request-user': 'admin@example.vn',
        'x-auth-request-user-id': 'u-admin',
        'x-auth-request-email': 'admin@example.vn',
        'x-auth-request-roles': 'admin',
      },
    })
    expect(answer.status).toBe(200)
    const seen = JSON.parse(answer.body)
    expect(seen.url).toBe('/grafana/api/search?q=x')
    expect(seen.headers).toMatchObject({ 'x-auth-request-user': 'ops@example.vn', 'x-auth-request-user-id': 'u-ops', 'x-auth-request-email': 'ops@example.vn', 'x-auth-request-roles': 'ops,viewer' })
    expect(seen.headers.cookie).not.toContain('svc_session')
    expect(seen.headers.cookie).toMatch(/grafana_session=g1/)
    expect(seen.headers.cookie).toMatch(/theme=dark/)
    expect(seen.headers.authorization).toBeUndefined()
  })

  it('keeps the check from browsers, the gateway\'s cookies from the service\'s answers, and \'_\' spellings of the user headers from the service', async () => {
    const cookie = await loginThrough(proxy(), 'ops', 'ops123')
    expect((await rawRequest(`${proxy().url}/auth/verify`, { headers: { cookie } })).status).toBe(404)
    const answer = await rawRequest(`${proxy().url}/grafana/gateway-cookies`, { headers: { cookie, x_auth_request_user: 'admin@example.vn' } })
    expect(answer.status).toBe(200)
    expect(Object.keys(JSON.parse(answer.body).headers).filter(name => name.replaceAll('_', '-').startsWith('x-auth-request')).sort()).toEqual(['x-auth-request-email', 'x-auth-request-roles', 'x-auth-request-user', 'x-auth-request-user-id'])
    // The service tried svc_session, svc_device and a nameless svc_session=… for Path=/: none can reach the gateway's pages.
    const lines = answer.headers['set-cookie'] as string[]
    expect(lines.length).toBe(4)
    for (const line of lines) {
      // As a browser reads it: the last Path attribute counts.
      const path = [...line.matchAll(/;[ \t]*path[ \t]*=[ \t]*([^;]*)/gi)].pop()?.[1] ?? ''
      if (/^[\s=]*(svc_session|svc_device)=/i.test(line)) expect(path, line).toMatch(/^\/grafana\//)
    }
    // Caddy renames them.
    if (name === 'caddy') expect(lines.filter(line => /^refused-(svc_session|svc_device)=/.test(line))).toHaveLength(3)
    expect(lines).toContainEqual(expect.stringMatching(/^kept=1;/))
  })

  it('refuses a session without the permission with 403, and a session after its logout with 401', async () => {
    const sale = await loginThrough(proxy(), 'sale', 'sale123')
    const refused = await rawRequest(`${proxy().url}/grafana/`, { headers: { cookie: sale } })
    expect(refused.status).toBe(403)
    // Caddy sends the gateway's answer back; nginx's auth_request answers a 403 with its own page.
    if (name === 'caddy') expect(JSON.parse(refused.body)).toMatchObject({ statusCode: 403, statusMessage: 'Bạn không có quyền truy cập.' })
    // Nor does naming the check's own query in the page's URL let it in (the check's query is the same as the client's).
    expect((await rawRequest(`${proxy().url}/grafana/?permission=/grafana/view`, { headers: { cookie: sale } })).status).toBe(403)

    const ops = await loginThrough(proxy(), 'ops', 'ops123')
    expect((await rawRequest(`${proxy().url}/grafana/`, { headers: { cookie: ops } })).status).toBe(200)
    expect((await rawRequest(`${proxy().url}/auth/logout`, { headers: { cookie: ops } })).status).toBe(302)
    expect((await rawRequest(`${proxy().url}/grafana/`, { headers: { cookie: ops } })).status).toBe(401)
  })
})

describe('a service for any signed-in user behind Caddy (`uri /auth/verify`, no query: Caddy keeps the client\'s)', () => {
  it('lets a session through on a URL with a query of its own, and sends a navigation without one to the login page', async () => {
    const cookie = await loginThrough(proxies.caddy!, 'viewer', 'viewer123')
    // viewer holds no /grafana/view: the wiki asks for none.
    const answer = await rawRequest(`${proxies.caddy!.url}/wiki/page?id=7&tab=history`, { headers: { cookie } })
    expect(answer.status).toBe(200)
    const seen = JSON.parse(answer.body)
    expect(seen.url).toBe('/wiki/page?id=7&tab=history')
    expect(seen.headers['x-auth-request-user']).toBe('viewer@example.vn')
    expect(seen.headers.cookie ?? '').not.toContain('svc_session')
    const anonymous = await rawRequest(`${proxies.caddy!.url}/wiki/page?id=7`, { headers: NAVIGATION })
    expect(anonymous.status).toBe(302)
    expect(anonymous.headers.location).toBe(`/auth/login?redirect=${encodeURIComponent('/wiki/page?id=7')}`)
    expect((await rawRequest(`${proxies.caddy!.url}/grafana/d/1?orgId=1`, { headers: { cookie } })).status).toBe(403)
    // A client's query with a name the check could take for its own is refused (400), never read as asking nothing.
    expect((await rawRequest(`${proxies.caddy!.url}/wiki/page?permision=/grafana/view`, { headers: { cookie } })).status).toBe(400)
  })
})

describe('a browser behind nginx', () => {
  it('opens a protected page: login page first, then the page it asked for, served by the service', async () => {
    const page = await stack.context.newPage()
    await page.goto(`${proxies.nginx!.url}${PAGE}`)
    await page.waitForURL(url => url.pathname === '/auth/login' && url.searchParams.get('redirect') === PAGE)
    await page.locator('button[type=submit]:not([disabled])').waitFor()
    await page.getByLabel('Tên đăng nhập').fill('ops')
    await page.getByLabel('Mật khẩu').fill('ops123')
    await page.getByRole('button', { name: 'Đăng nhập', exact: true }).click()
    await page.waitForURL(`${proxies.nginx!.url}${PAGE}`)
    const seen = JSON.parse(await page.locator('body').innerText())
    expect(seen.headers['x-auth-request-user']).toBe('ops@example.vn')
    expect(seen.headers.cookie ?? '').not.toContain('svc_session')
  })
})
