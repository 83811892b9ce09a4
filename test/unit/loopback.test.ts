import { describe, expect, it } from 'vitest'
import { isLoopbackUrl } from '../../server/core/http/loopback'

describe('isLoopbackUrl: plain-http development addresses', () => {
  it.each([
    'http://127.0.0.1:4030',
    'http://127.0.0.2:4030/realms/dev',
    'http://127.255.255.254',
    'http://127.0.0.1',
    'http://localhost:8080',
    'http://LOCALHOST:8080',
    'http://[::1]:4030',
    'http://user@127.0.0.3/x',
  ])('%s is loopback', (text) => {
    expect(isLoopbackUrl(text)).toBe(true)
  })

  it.each([
    // Names that begin like a loopback host
    'http://127.0.0.1.evil.com',
    'http://127.0.0.1.nip.io:4030',
    'http://localhost.evil',
    'http://localhost.evil.com:4030',
    'http://evil.localhost.com',
    'http://127.evil.com',
    // Other spellings the URL parser turns into 127.x addresses
    'http://0x7f.1',
    'http://0x7f000001',
    'http://2130706433',
    'http://127.1',
    'http://127.0.1',
    'http://0177.0.0.1',
    'http://127.000.000.001',
    'http://[0:0:0:0:0:0:0:1]',
    'http://[::ffff:127.0.0.1]',
    'http://localhost.',
    // Not loopback at all
    'http://128.0.0.1',
    'http://0.0.0.0',
    'http://10.0.0.1',
    'http://[::2]',
    'http://sso.example',
    'not a url',
    '',
  ])('%s is not', (text) => {
    expect(isLoopbackUrl(text)).toBe(false)
  })
})
