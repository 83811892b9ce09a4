import { describe, expect, it } from 'vitest'
import { parseApiRoutes } from '../../server/core/config/routes'
import { challengedNeed, combineNeeds, meetsNeed, parseAcrValues, stepUpHint, stepUpQuery } from '../../server/core/session/auth-level'

const NOW = 1_800_000_000_000
const seconds = NOW / 1000

describe('meetsNeed: a session\'s acr and auth_time against what is asked', () => {
  it.each([
    [{ acr: 'mfa', authTime: seconds - 10 }, undefined, true],
    [{ acr: 'mfa' }, { acr: ['mfa'] }, true],
    [{ acr: 'pwd' }, { acr: ['mfa'] }, false],
    [{ acr: 'pwd' }, { acr: ['mfa', 'pwd'] }, true],
    [{}, { acr: ['mfa'] }, false],
    [undefined, { acr: ['mfa'] }, false],
    [{ acr: 'pwd', authTime: seconds - 299 }, { acr: [], maxAge: 300 }, true],
    [{ acr: 'pwd', authTime: seconds - 301 }, { acr: [], maxAge: 300 }, false],
    [{ acr: 'mfa' }, { acr: [], maxAge: 300 }, false],
    [{ acr: 'mfa', authTime: seconds - 10 }, { acr: ['mfa'], maxAge: 5 }, false],
  ])('%j against %j: %s', (level, need, met) => {
    expect(meetsNeed(level, need, NOW)).toBe(met)
  })
})

describe('challengedNeed: a backend\'s RFC 9470 WWW-Authenticate', () => {
  it.each([
    ['Bearer error="insufficient_user_authentication", error_description="A different authentication level is required", acr_values="mfa"', { acr: ['mfa'] }],
    ['Bearer error="insufficient_user_authentication", acr_values="mfa hwk", max_age="300"', { acr: ['mfa', 'hwk'], maxAge: 300 }],
    ['Bearer error=insufficient_user_authentication, max_age=0', { acr: [], maxAge: 0 }],
    [['Basic realm="x"', 'Bearer realm="api", error="insufficient_user_authentication", acr_values="mfa"'], { acr: ['mfa'] }],
    ['Bearer error="invalid_token"', undefined],
    ['Basic realm="insufficient_user_authentication"', undefined],
    ['Bearer error_description="insufficient_user_authentication"', undefined],
    [undefined, undefined],
  ])('%j: %j', (header, need) => {
    expect(challengedNeed(header)).toEqual(need)
  })
})

describe('the rest of step-up\'s pure parts', () => {
  it('reads acr values, refusing what is not one', () => {
    expect(parseAcrValues(' mfa  urn:acr:2 ')).toEqual(['mfa', 'urn:acr:2'])
    expect(parseAcrValues('')).toEqual([])
    expect(parseAcrValues('m"fa')).toBeUndefined()
  })

  it('combines a route\'s need with the gateway\'s: the route\'s acr, the shorter max age', () => {
    expect(combineNeeds({ acr: ['mfa'] }, { acr: ['pwd'], maxAge: 600 })).toEqual({ acr: ['mfa'], maxAge: 600 })
    expect(combineNeeds({ acr: [], maxAge: 60 }, { acr: ['pwd'], maxAge: 600 })).toEqual({ acr: ['pwd'], maxAge: 60 })
    expect(combineNeeds(undefined, { acr: ['pwd'] })).toEqual({ acr: ['pwd'] })
  })

  it('says it to the page and to /auth/sso', () => {
    expect(stepUpHint({ acr: ['mfa', 'hwk'], maxAge: 300 })).toEqual({ acr: 'mfa hwk', maxAge: 300 })
    expect(stepUpHint({ acr: [] })).toEqual({ acr: null, maxAge: null })
    expect(stepUpQuery({ acr: ['mfa', 'hwk'], maxAge: 0 })).toBe('acr_values=mfa+hwk&max_age=0')
  })
})

describe('routes file: acr and maxAge', () => {
  const parse = (extra: Record<string, unknown>) => parseApiRoutes({ routes: [{ name: 'reports', prefix: '/api/reports', target: 'http://127.0.0.1:9000', ...extra }] }, { timeoutMs: 30_000 })[0]!
  it('takes one acr, several, and a max age in seconds', () => {
    expect(parse({ acr: 'mfa' })).toMatchObject({ acr: ['mfa'] })
    expect(parse({ acr: ['mfa', 'hwk'], maxAge: 300 })).toMatchObject({ acr: ['mfa', 'hwk'], maxAge: 300 })
    expect(parse({})).not.toHaveProperty('acr')
  })

  it.each([
    [{ acr: '' }, 'trường acr'],
    [{ acr: ['m fa'] }, 'trường acr'],
    [{ acr: 3 }, 'trường acr'],
    [{ maxAge: -1 }, 'trường maxAge'],
    [{ maxAge: '300' }, 'trường maxAge'],
    [{ maxAge: 1.5 }, 'trường maxAge'],
  ])('refuses %j, naming the field', (extra, field) => {
    expect(() => parse(extra)).toThrow(field)
  })
})
