import { describe, expect, it } from 'vitest'
import { backendPath } from '../../server/core/proxy/api-path'
import { REFUSED_PATHS, SENT_PATHS } from './api-path-corpus'

describe('backendPath', () => {
  it.each(SENT_PATHS)('%s on base %s -> %s', (url, base, expected) => {
    expect(backendPath(url, base)).toBe(expected)
  })

  it.each(REFUSED_PATHS)('refuses %s', (url) => {
    expect(backendPath(url, '/v1')).toBeNull()
  })
})
