import { describe, expect, it } from 'vitest'
import { keepsSecureCookies } from '../../shared/secure-cookies'

describe('keepsSecureCookies: whether a browser keeps a Secure cookie from this address', () => {
  it.each([
    ['https:', 'staging.example', true],
    ['HTTPS:', 'staging.example:8443', true],
    ['http:', 'localhost', true],
    ['http:', 'LOCALHOST:3000', true],
    ['http:', 'localhost.:3000', true],
    ['http:', 'orders.localhost:3000', true],
    ['http:', '127.0.0.1:3000', true],
    ['http:', '127.1.2.3', true],
    ['http:', '[::1]:3000', true],
    ['http:', '[::1]', true],
    ['http:', 'staging.example', false],
    ['http:', 'staging.example:8080', false],
    ['http:', '10.0.0.5:3000', false],
    ['http:', '0.0.0.0:3000', false],
    ['http:', '[::ffff:127.0.0.1]:3000', false],
    ['http:', 'localhost.example', false],
    ['http:', 'mylocalhost', false],
    ['http:', '127.0.0.1.nip.io', false],
    ['http:', '', false],
  ])('%s//%s: %s', (protocol, host, kept) => {
    expect(keepsSecureCookies(protocol, host)).toBe(kept)
  })
})
