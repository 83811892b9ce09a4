import { describe, expect, it } from 'vitest'
import { rawErrorResponse, rawResponseHead } from '../../server/core/proxy/raw-response'

describe('rawResponseHead', () => {
  it('writes the status line, every value of every header, and the blank line', () => {
    expect(rawResponseHead(101, { 'upgrade': 'websocket', 'connection': 'Upgrade', 'set-cookie': ['a=1', 'b=2'], 'skipped': undefined }))
      .toBe('HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nset-cookie: a=1\r\nset-cookie: b=2\r\n\r\n')
  })

  it('cannot be split by a value holding CR or LF (a backend\'s header never injects one of its own)', () => {
    expect(rawResponseHead(401, { 'x-note': 'a\r\nset-cookie: svc_session=forged\r\n' })).toBe('HTTP/1.1 401 Unauthorized\r\nx-note: aset-cookie: svc_session=forged\r\n\r\n')
  })
})

describe('rawErrorResponse', () => {
  it('is the contract\'s JSON error with its length, no-store, the request id, and closes the connection', () => {
    const text = rawErrorResponse(403, 'Yêu cầu khác nguồn gốc bị từ chối.', 'rid-1')
    const [head, body] = text.split('\r\n\r\n')
    expect(JSON.parse(body!)).toEqual({ statusCode: 403, statusMessage: 'Yêu cầu khác nguồn gốc bị từ chối.', message: 'Yêu cầu khác nguồn gốc bị từ chối.' })
    expect(head).toBe(`HTTP/1.1 403 Forbidden\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body!)}\r\ncache-control: no-store\r\nx-request-id: rid-1\r\nconnection: close`)
  })
})
