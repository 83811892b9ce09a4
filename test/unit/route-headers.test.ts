import { describe, expect, it } from 'vitest'
import { ruleHeadersOf } from '../../server/core/http/route-headers'

describe('the app\'s route rules headers for proxied answers', () => {
  const headersOf = ruleHeadersOf([
    { route: '/api/**', headers: { 'X-Frame-Options': 'DENY', 'x-tier': 'all' } },
    { route: '/api/reports/**', headers: { 'x-tier': 'reports' } },
    { route: '/pages/**', headers: { 'x-page': '1' } },
  ])

  it('merges every matching rule, the most specific pattern winning a name, names lower-case', () => {
    expect(headersOf('/api/orders')).toEqual({ 'x-frame-options': 'DENY', 'x-tier': 'all' })
    expect(headersOf('/api/reports/2026')).toEqual({ 'x-frame-options': 'DENY', 'x-tier': 'reports' })
    expect(headersOf('/api/reports/2026')).toEqual({ 'x-frame-options': 'DENY', 'x-tier': 'reports' }) // remembered
  })

  it('gives nothing to a path no rule matches, and nothing at all without rules', () => {
    expect(headersOf('/auth/session')).toBeUndefined()
    expect(ruleHeadersOf([])('/api/orders')).toBeUndefined()
  })
})
