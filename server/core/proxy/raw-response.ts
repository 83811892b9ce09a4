/** HTTP/1.1 answers written straight to a socket (WebSocket handshakes have no ServerResponse). Pure. */
import { STATUS_CODES } from 'node:http'

export type RawHeaders = Record<string, string | string[] | number | undefined>

/** The status line and header block of an answer, ending with the blank line; CR and LF are removed from values. */
export function rawResponseHead(status: number, headers: RawHeaders): string {
  let text = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n`
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue
    for (const item of Array.isArray(value) ? value : [value]) text += `${name}: ${String(item).replace(/[\r\n]/g, '')}\r\n`
  }
  return `${text}\r\n`
}

/** The contract's JSON error `{ statusCode, statusMessage }` as a whole answer that closes the connection. */
export function rawErrorResponse(status: number, message: string, requestId: string, extra: Record<string, string> = {}): string {
  const body = JSON.stringify({ statusCode: status, statusMessage: message, message })
  return rawResponseHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'x-request-id': requestId,
    'connection': 'close',
    ...extra,
  }) + body
}
