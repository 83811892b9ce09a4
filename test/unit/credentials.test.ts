import { describe, expect, it } from 'vitest'
import { parseLoginCredentials } from '../../server/core/iam/credentials'
import { deviceNameFromUserAgent, isDeviceId } from '../../server/core/iam/device'

describe('parseLoginCredentials', () => {
  it('trims the username and keeps the password as sent', () => {
    expect(parseLoginCredentials({ username: '  alice ', password: ' p ' })).toEqual({ username: 'alice', password: ' p ' })
  })
  it.each([
    null, {}, { username: 'a' }, { password: 'p' }, { username: '   ', password: 'p' }, { username: 'a', password: '' },
    { username: 1, password: 'p' }, { username: 'a', password: 123 }, { username: ['a'], password: 'p' },
  ])('refuses %j', (body) => {
    expect(parseLoginCredentials(body as Record<string, unknown> | null)).toBeNull()
  })
  it('keeps optional fields as strings and drops other types', () => {
    expect(parseLoginCredentials({ username: 'a', password: 'p', clientId: 7, otp: 123456, transactionId: 'tx', method: 'messenger' }))
      .toEqual({ username: 'a', password: 'p', clientId: '7', otp: '123456', transactionId: 'tx', method: 'messenger' })
    expect(parseLoginCredentials({ username: 'a', password: 'p', clientId: {}, otp: null, method: 'sms' }))
      .toEqual({ username: 'a', password: 'p' })
  })
})

describe('device fields', () => {
  it.each([
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36', 'Chrome on Linux'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0', 'Firefox on Windows'],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Version/17.0 Mobile/15E148 Safari/604.1', 'Safari on iOS'],
    ['Mozilla/5.0 (Windows NT 10.0) AppleWebKit/537.36 Chrome/120.0 Safari/537.36 Edg/120.0', 'Edge on Windows'],
    ['curl/8.0', 'curl'],
    [undefined, 'Trình duyệt'],
  ])('%s -> %s', (agent, name) => {
    expect(deviceNameFromUserAgent(agent)).toBe(name)
  })
  it('accepts only UUIDs as device ids', () => {
    expect(isDeviceId('0b8e2f7e-3c1a-4d2b-9f00-1234567890ab')).toBe(true)
    expect(isDeviceId('x; Path=/')).toBe(false)
    expect(isDeviceId(undefined)).toBe(false)
  })
})
