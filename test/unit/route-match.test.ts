import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createApp, createRouter, eventHandler, toNodeListener } from 'h3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contractMethods } from '../../server/core/http/contract-routes'
import { createRouteDecider, decideApiRequest, pathSpellings, rememberedApiDecisions, routerPath, type RouteDecider, type RouteEntry } from '../../server/core/http/route-match'
import { rawRequest } from '../support/raw-http'

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

describe('rememberedApiDecisions', () => {
  /** The build's decider, counting its lookups. */
  function counted() {
    const calls = { count: 0 }
    const counting: RouteDecider = (path, method) => {
      calls.count++
      return decide(path, method)
    }
    return { calls, decideApi: rememberedApiDecisions(counting) }
  }

  it('decides as decideApiRequest does, for every method and spelling', () => {
    const { decideApi } = counted()
    for (const path of ['/api/health', '/api/orders', '/api//health', '/api/HEALTH', '/api/users/7;jsessionid=1', '/api/orders;x']) {
      for (const method of ['get', 'post', 'delete']) {
        expect(decideApi(path, method)).toBe(decideApiRequest(decide, path, method))
        expect(decideApi(path, method)).toBe(decideApiRequest(decide, path, method)) // remembered: the same again
      }
    }
  })

  it('looks a (method, path) up once, and keeps method and path apart', () => {
    const { calls, decideApi } = counted()
    expect(decideApi('/api/health', 'get')).toBe('route')
    expect(decideApi('/api/health', 'get')).toBe('route')
    expect(calls.count).toBe(1)
    expect(decideApi('/api/health', 'post')).toBe('route')
    expect(calls.count).toBe(2)
  })

  it('stays bounded: ever new paths are decided each time, long paths are never kept', () => {
    const { calls, decideApi } = counted()
    decideApi('/api/orders/first', 'get')
    for (let i = 0; i < 1024; i++) decideApi(`/api/orders/${i}`, 'get')
    const before = calls.count
    decideApi('/api/orders/first', 'get') // pushed out when the memory started over
    expect(calls.count).toBe(before + 1)
    const long = `/api/${'x'.repeat(300)}`
    decideApi(long, 'get')
    decideApi(long, 'get')
    expect(calls.count).toBe(before + 3)
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
