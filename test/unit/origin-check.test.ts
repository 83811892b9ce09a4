import { describe, expect, it } from 'vitest'
import { isSameOriginHandshake, isSameOriginRequest, type OriginFacts } from '../../server/core/http/origin-check'

const base: OriginFacts = { method: 'POST', host: 'gw.example', trustedOrigins: ['https://partner.example'] }
const check = (facts: Partial<OriginFacts>) => isSameOriginRequest({ ...base, ...facts })

describe('isSameOriginRequest (Go http.CrossOriginProtection)', () => {
  it.each(['GET', 'HEAD', 'OPTIONS', 'get'])('lets the safe method %s through whatever the headers', (method) => {
    expect(check({ method, secFetchSite: 'cross-site', origin: 'https://evil.example' })).toBe(true)
  })

  describe('with Sec-Fetch-Site', () => {
    it.each([
      ['same-origin', undefined, true],
      ['none', undefined, true],
      ['same-origin', 'https://evil.example', true],
      ['same-site', 'https://sub.gw.example', false],
      ['cross-site', 'https://evil.example', false],
      ['cross-site', undefined, false],
      ['cross-site', 'https://partner.example', true],
      ['same-site', 'https://PARTNER.example/', true],
      ['weird-value', 'https://gw.example', false],
    ])('%s with Origin %s -> %s', (secFetchSite, origin, expected) => {
      expect(check({ secFetchSite, origin })).toBe(expected)
    })
  })

  describe('without Sec-Fetch-Site (older browsers, curl)', () => {
    it.each([
      [undefined, 'gw.example', true],
      ['https://gw.example', 'gw.example', true],
      ['http://gw.example', 'gw.example', true],
      ['https://gw.example:8443', 'gw.example:8443', true],
      ['https://gw.example:8443', 'gw.example', false],
      ['https://gw.example', 'gw.example:443', true],
      ['http://127.0.0.1:3000', '127.0.0.1:3000', true],
      ['http://127.0.0.1:3001', '127.0.0.1:3000', false],
      ['https://GW.example', 'gw.EXAMPLE', true],
      ['https://evil.example', 'gw.example', false],
      ['null', 'gw.example', false],
      ['https://partner.example', 'gw.example', true],
      ['javascript:alert(1)', 'gw.example', false],
    ])('Origin %s to Host %s -> %s', (origin, host, expected) => {
      expect(check({ origin, host })).toBe(expected)
    })
  })

  // APP_TRUSTED_ORIGINS lists whole origins: a name that starts, ends or nearly matches like one is another site.
  const lookalikes = ['https://partner.example.evil.test', 'https://partner.example:8443', 'http://partner.example', 'https://evil.partner.example', 'https://partner.exampl', 'https://partner.example.', 'https://partner.example@evil.test']
  it.each(lookalikes)('refuses %s, which is not the trusted https://partner.example, with or without Sec-Fetch-Site', (origin) => {
    expect(check({ secFetchSite: 'cross-site', origin })).toBe(false)
    expect(check({ secFetchSite: 'same-site', origin })).toBe(false)
    expect(check({ origin })).toBe(false)
  })

  it.each(['PUT', 'PATCH', 'DELETE', 'POST'])('applies to %s', (method) => {
    expect(check({ method, secFetchSite: 'cross-site' })).toBe(false)
  })
})

describe('isSameOriginHandshake (WebSocket handshakes, a GET the browser sends with cookies from any site)', () => {
  it.each([
    [undefined, 'gw.example', true],
    ['https://gw.example', 'gw.example', true],
    ['https://gw.example:443', 'gw.example', true],
    ['http://gw.example:8080', 'gw.example:8080', true],
    ['HTTPS://GW.EXAMPLE', 'gw.example', true],
    ['https://partner.example', 'gw.example', true],
    ['https://partner.example/', 'gw.example', true],
    ['https://partner.example.evil.test', 'gw.example', false],
    ['https://partner.example:8443', 'gw.example', false],
    ['http://partner.example', 'gw.example', false],
    ['https://evil.partner.example', 'gw.example', false],
    ['https://partner.exampl', 'gw.example', false],
    ['https://evil.example', 'gw.example', false],
    ['https://gw.example.evil.example', 'gw.example', false],
    ['https://sub.gw.example', 'gw.example', false],
    ['http://gw.example:8081', 'gw.example:8080', false],
    ['null', 'gw.example', false],
    ['', 'gw.example', false],
    ['file://', 'gw.example', false],
    ['chrome-extension://abc', 'gw.example', false],
  ])('Origin %j to host %s: %s', (origin, host, expected) => {
    expect(isSameOriginHandshake(origin, host, ['https://partner.example'])).toBe(expected)
  })
})
