import { describe, expect, it } from 'vitest'
import { en, vi } from '../../shared/messages'
import { logEntries, type RunningGateway } from '../support/gateway'
import { postLogin } from '../support/login'
import { rawRequest } from '../support/raw-http'
import { useStack } from '../support/stack'

/**
 * svc_session is Secure, and a browser drops a Secure cookie that comes over plain http from a host other than its own
 * machine: the login answers 200 and the user is back on the login page. The gateway knows the request came over http
 * (its socket, or X-Forwarded-Proto from a proxy believed through APP_TRUST_PROXY) and says so: on the login page, in
 * the page's language, and once in the log. Secure is never dropped for it.
 */
const stack = useStack({ backend: 'none' })

/** The login page as a browser's navigation asks for it, to `host` (the Host header), in `language`. */
function loginPage(gateway: RunningGateway, host: string, language = 'vi', extra: Record<string, string> = {}) {
  return rawRequest(`${gateway.url}/auth/login`, { headers: { 'host': host, 'accept': 'text/html', 'accept-language': language, ...extra } })
}

/** The log's warnings about plain http. */
const plainHttpWarnings = (gateway: RunningGateway) => logEntries(gateway.stdout()).filter(entry => entry.level === 'warn' && String(entry.msg).includes('APP_TRUST_PROXY'))

describe('plain http', () => {
  it('to a host that is not the browser\'s own machine: the login page says why in its language, the log says it once (https, APP_TRUST_PROXY), Secure stays', async () => {
    const gateway = await stack.gatewayWith()
    const page = await loginPage(gateway, 'staging.example:8080')
    expect(page.status).toBe(200)
    expect(page.body).toContain(vi.errors.plainHttp)
    expect((await loginPage(gateway, 'staging.example:8080', 'en-US,en;q=0.9')).body).toContain(en.errors.plainHttp)

    const login = await postLogin(gateway, { username: 'sale', password: 'sale123' }, { host: 'staging.example:8080' })
    expect(login.status).toBe(200)
    expect((login.headers['set-cookie'] as string[]).find(line => line.startsWith('svc_session='))).toMatch(/; Secure$/)

    await expect.poll(() => plainHttpWarnings(gateway).length).toBe(1)
    const [warning] = plainHttpWarnings(gateway)
    expect(warning).toMatchObject({ host: 'staging.example:8080' })
    expect(warning!.msg).toMatch(/\bhttps\b.*APP_TRUST_PROXY/)
  })

  it('says nothing from the browser\'s own machine, over https from a proxy believed, or when a proxy not believed says https', async () => {
    const direct = await stack.gatewayWith()
    for (const host of [`127.0.0.1:${direct.port}`, `localhost:${direct.port}`, `[::1]:${direct.port}`, 'orders.localhost']) {
      const page = await loginPage(direct, host)
      expect(page.status, host).toBe(200)
      expect(page.body, host).not.toContain(vi.errors.plainHttp)
    }
    // No APP_TRUST_PROXY: an X-Forwarded-Proto is not believed, but a browser behind a proxy that says https keeps the cookie.
    expect((await loginPage(direct, 'orders.example', 'vi', { 'x-forwarded-proto': 'https' })).body).not.toContain(vi.errors.plainHttp)
    await postLogin(direct, { username: 'sale', password: 'sale123' }, { host: `localhost:${direct.port}` })

    const behindProxy = await stack.gatewayWith({ APP_TRUST_PROXY: '1' })
    const tls = await loginPage(behindProxy, 'gateway:3000', 'vi', { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'orders.example' })
    expect(tls.body).not.toContain(vi.errors.plainHttp)
    expect(plainHttpWarnings(direct)).toEqual([])
    expect(plainHttpWarnings(behindProxy)).toEqual([])
    // The proxy in front says the browser came over http.
    const plain = await loginPage(behindProxy, 'gateway:3000', 'vi', { 'x-forwarded-proto': 'http', 'x-forwarded-host': 'orders.example' })
    expect(plain.body).toContain(vi.errors.plainHttp)
    await expect.poll(() => plainHttpWarnings(behindProxy).map(entry => entry.host)).toEqual(['orders.example'])
  })
})
