import { describe, expect, it } from 'vitest'
import { gatewayRouteTable } from '../../server/core/http/route-table'

const PROXY = '/layer/server/routes/api/[...path].ts'

describe('gatewayRouteTable', () => {
  it('lists every route, the proxy catch-all marked, methods in lower case, the renderer last, middleware left out', () => {
    expect(gatewayRouteTable([
      { route: '/auth/login', method: 'POST', handler: '/layer/server/routes/auth/login.post.ts' },
      { route: '/api/**:path', handler: PROXY },
      { route: '/api/health', method: 'get', handler: '/app/server/routes/api/health.get.ts' },
      { middleware: true, handler: '/app/server/middleware/log.ts' },
      { route: '', handler: '/app/server/plugin-like.ts' },
    ], PROXY, true)).toEqual([
      { route: '/auth/login', method: 'post' },
      { route: '/api/**:path', proxy: true },
      { route: '/api/health', method: 'get' },
      { route: '/**' },
    ])
  })

  it('stops the build when the proxy route is missing (a renamed file), doubled, or not under /api/**', () => {
    const other = { route: '/api/health', handler: '/app/health.ts' }
    expect(() => gatewayRouteTable([other], PROXY, false)).toThrow(/có 0 route proxy \/api\/\*\* của gateway .*cần đúng một ở \/api\/\*\*/)
    expect(() => gatewayRouteTable([{ route: '/api/**:path', handler: PROXY }, { route: '/api/**', handler: PROXY }], PROXY, false)).toThrow(/có 2 route proxy/)
    expect(() => gatewayRouteTable([{ route: '/proxy/**', handler: PROXY }], PROXY, false)).toThrow(/\/proxy\/\*\*/)
  })
})
