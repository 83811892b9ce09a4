import { describe, expect, it } from 'vitest'
import { accessLineMembers, jsonString, type AccessLine } from '../../server/core/ops/access-line'

/** The members as the object a JSON parser reads back. */
const parsed = (members: string) => JSON.parse(`{${members.slice(1)}}`)

const plain: AccessLine = { type: 'access', method: 'GET', path: '/api/orders', status: 200, ms: 1.23, bytes: 240, requestId: 'r-1', client: '10.0.0.7', group: 'api' }

describe('accessLineMembers', () => {
  it('writes every field of the line, in the object\'s order, and nothing else', () => {
    const members = accessLineMembers(plain)
    expect(members.startsWith(',"type":"access",')).toBe(true)
    expect(parsed(members)).toEqual(plain)
    expect(Object.keys(parsed(members))).toEqual(Object.keys(plain))
  })

  it('writes the route, aborted and tunnel fields only when set', () => {
    expect(parsed(accessLineMembers({ ...plain, status: 0, aborted: true }))).toEqual({ ...plain, status: 0, aborted: true })
    expect(parsed(accessLineMembers({ ...plain, status: 101, tunnel: true, bytesIn: 42 }))).toEqual({ ...plain, status: 101, tunnel: true, bytesIn: 42 })
    expect(parsed(accessLineMembers({ ...plain, route: 'billing' }))).toEqual({ ...plain, route: 'billing' })
    expect(accessLineMembers({ ...plain, route: 'billing', aborted: true })).toMatch(/,"group":"api","route":"billing","aborted":true$/)
    expect(accessLineMembers(plain)).not.toMatch(/aborted|tunnel|bytesIn|route/)
  })

  it('writes the trace\'s ids last, only with tracing on (a sampled request)', () => {
    const traced = { ...plain, route: 'billing', traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' }
    expect(parsed(accessLineMembers(traced))).toEqual(traced)
    expect(accessLineMembers(traced)).toMatch(/,"route":"billing","traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"00f067aa0ba902b7"$/)
    expect(accessLineMembers(plain)).not.toMatch(/traceId|spanId/)
  })

  it('escapes whatever a request puts in its strings: quotes, backslashes, control characters, lone surrogates', () => {
    const hostile: AccessLine = {
      ...plain,
      method: 'G"ET',
      path: '/api/"},"status":1,"x":"\\\n\r\u0000\u001b\u2028\ud800é',
      requestId: 'a\\"b',
      client: '"1.2.3.4"',
    }
    const members = accessLineMembers(hostile)
    for (const raw of ['\n', '\r', '\u0000']) expect(members).not.toContain(raw)
    expect(parsed(members)).toEqual(hostile)
  })

  it('writes a number JSON cannot hold as null, never as NaN or Infinity', () => {
    const members = accessLineMembers({ ...plain, ms: Number.NaN, bytes: Number.POSITIVE_INFINITY })
    expect(parsed(members)).toEqual({ ...plain, ms: null, bytes: null })
  })
})

describe('jsonString', () => {
  it('writes every string exactly as JSON.stringify does', () => {
    // Every UTF-16 code unit, compared in plain code and asserted once (65,536 expect() calls took seconds).
    const differing: string[] = []
    for (let code = 0; code <= 0xFFFF; code++) {
      const text = `/api/${String.fromCharCode(code)}x`
      if (jsonString(text) !== JSON.stringify(text)) differing.push(`U+${code.toString(16).padStart(4, '0')}: ${jsonString(text)}`)
    }
    expect(differing.length, differing.slice(0, 10).join('\n')).toBe(0)
    for (const value of ['', 'GET', '/api/orders?x=1', '"', '\\', '\\"', 'a"b\\c', '\u2028', '\ud83d\ude00', '\udc00', '~ !#$%&\'()*+,-./:;<=>?@[]^_`{|}'])
      expect(jsonString(value)).toBe(JSON.stringify(value))
  })
})
