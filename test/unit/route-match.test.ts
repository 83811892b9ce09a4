import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createApp, createRouter, eventHandler, toNodeListener } from 'h3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contractMethods } from '../../server/core/contract-routes'
import { createRouteDecider, decideApiRequest, pathSpellings, routerPath, type RouteEntry } from '../../server/core/route-match'
import { rawRequest } from '../helpers/raw-http'

// The routes of a playground-like build: app routes, the gateway's catch-all, the contract routes.
const ROUTES: RouteEntry[] = [
  { route: '/api/health', method: 'get' },
  { route: '/api/feedback', method: 'post' },
  { route: '/api/users/:id' },
  { route: '/api/files/**' },
  { route: '/api/**:path', proxy: true },
  { route: '/auth/login', method: 'post' },
  { route: '/auth/session', method: 'get' },
  { route: '/**' },
]
const decide = createRouteDecider(ROUTES)

describe('routerPath', () => {
  it.each([
    ['/api/health', '/api/health'],
    ['/api/hea%6cth', '/api/health'],
    ['/%61uth/login', '/auth/login'],
    ['/api/health?x=1', '/api/health'],
    ['/api/health%3Fx=1', '/api/health'],
    ['/api/a%2Fb', '/api/a%2Fb'],
    ['/api/a%252Fb', '/api/a%252Fb'],
    ['/api/%25', '/api/%25'],
    ['/api/%2525', '/api/%2525'],
    ['/api/%zz', '/api/%zz'],
  ])('%s is %s to the router', (raw, expected) => {
    expect(routerPath(raw)).toBe(expected)
  })
})

// The decision checked against h3's own router, fed the same raw URLs: the gateway's mirror must agree with it.
describe('createRouteDecider agrees with h3\'s router', () => {
  let url = ''
  let close: () => Promise<void>
  beforeAll(async () => {
    const app = createApp()
    const router = createRouter({ preemptive: true })
    ROUTES.forEach((entry, index) => {
      const target = entry.proxy ? 'proxy' : `route-${index}`
      router.use(entry.route, eventHandler(() => target), entry.method as 'get' | undefined)
    })
    app.use(router)
    const server = createServer(toNodeListener(app))
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    close = () => new Promise(resolve => server.close(() => resolve()))
  })
  afterAll(() => close())

  it.each([
    ['GET', '/api/health'], ['GET', '/api/hea%6cth'], ['GET', '/api/health/'], ['GET', '/api//health'], ['GET', '/api/health;x'],
    ['POST', '/api/health'], ['HEAD', '/api/health'], ['POST', '/api/feedback'], ['GET', '/api/feedback'], ['GET', '/api/users/7'],
    ['DELETE', '/api/users/7'], ['GET', '/api/users/7/x'], ['GET', '/api/files'], ['GET', '/api/files/a/b'], ['GET', '/api/orders'],
    ['GET', '/api'], ['GET', '/api/'], ['GET', '/api/%2e%2e/x'], ['GET', '/api/health%3Fx'], ['GET', '/api/HEALTH'],
    ['PUT', '/auth/login'], ['POST', '/%61uth/login'], ['DELETE', '/auth/session'], ['GET', '/auth/session/'], ['GET', '/'],
  ])('%s %s', async (method, raw) => {
    const answer = await rawRequest(url + raw, { method })
    const served = answer.status === 200 ? (method === 'HEAD' ? 'head' : JSON.parse(JSON.stringify(answer.body))) : 'none'
    const expected = decide(routerPath(raw), method.toLowerCase())
    if (method === 'HEAD') return expect(answer.status === 200 ? expected !== 'none' : expected === 'none').toBe(true)
    expect(expected).toBe(served === 'proxy' ? 'proxy' : served === 'none' ? 'none' : 'route')
  })
})

describe('decideApiRequest', () => {
  it.each([
    ['/api/health', 'get', 'route'],
    ['/api/orders', 'get', 'proxy'],
    ['/api/health', 'post', 'route'], // GET only, yet h3 falls back to '/**', never to the proxy: so do we
    ['/api//health', 'get', 'refuse'],
    ['/api/health;x', 'get', 'refuse'],
    ['/api/health;x=1/', 'get', 'refuse'],
    ['/api/HEALTH', 'get', 'refuse'],
    ['/api/hea%256cth', 'get', 'refuse'],
    ['/api/x\\..\\health', 'get', 'proxy'],
    ['/api/users/7;jsessionid=1', 'get', 'route'], // ':id' takes the whole segment: the app's route, as in Nitro
    ['/api/orders;x', 'get', 'proxy'],
    ['/api/Orders', 'get', 'proxy'],
  ])('%s %s: %s', (path, method, expected) => {
    expect(decideApiRequest(decide, path, method)).toBe(expected)
  })

  it('finds no other spelling for a plain path (the common case costs no extra lookups)', () => {
    expect(pathSpellings('/api/orders/42')).toEqual([])
  })
})

describe('contractMethods', () => {
  it.each([
    ['/auth/login', ['GET', 'HEAD', 'POST']],
    ['/auth/login/', ['GET', 'HEAD', 'POST']],
    ['/auth/session', ['GET', 'HEAD']],
    ['/auth/clients', ['GET', 'HEAD']],
    ['/auth/otp/send', ['POST']],
    ['/auth/logout', ['GET', 'HEAD']],
    ['/auth/other', undefined],
    ['/auth/login//', undefined],
    ['/Auth/login', undefined],
    ['/constructor', undefined],
  ])('%s: %j', (path, expected) => {
    expect(contractMethods(path)).toEqual(expected)
  })
})
