import { describe, expect, it } from 'vitest'
import { compileRoute, compileRoutes } from '../../server/core/route-match'

describe('compileRoute', () => {
  it.each([
    ['/api/health', '/api/health', true],
    ['/api/health', '/api/health/', true],
    ['/api/health', '/api/health/x', false],
    ['/api/health', '/api/healthz', false],
    ['/api/users/:id', '/api/users/7', true],
    ['/api/users/:id', '/api/users', false],
    ['/api/users/:id', '/api/users/7/orders', false],
    ['/api/files/**', '/api/files', true],
    ['/api/files/**', '/api/files/a/b/c', true],
    ['/api/files/**:path', '/api/files/a', true],
    ['/api/files/**', '/api/other', false],
  ])('%s matches %s: %s', (pattern, path, expected) => {
    expect(compileRoute(pattern)(path)).toBe(expected)
  })
  it('combines patterns', () => {
    const match = compileRoutes(['/api/health', '/api/users/:id'])
    expect(match('/api/users/1')).toBe(true)
    expect(match('/api/orders')).toBe(false)
    expect(compileRoutes([])('/api/x')).toBe(false)
  })
})
