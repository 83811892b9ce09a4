import { connect, type Socket } from 'node:net'
import { request } from 'node:http'

export interface RawAnswer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/**
 * One HTTP request with exactly the given headers (fetch would add or refuse some, like Origin or Sec-Fetch-Site)
 * and exactly the given path: `/api/%2e%2e/x` is sent as written, never normalised by a URL parser.
 */
export function rawRequest(url: string, options: { method?: string, headers?: Record<string, string>, body?: string } = {}): Promise<RawAnswer> {
  const [, origin = '', path = '/'] = /^(https?:\/\/[^/?#]+)(.*)$/s.exec(url) ?? []
  const { hostname, port } = new URL(origin)
  return new Promise((resolve, reject) => {
    // Node sends a DELETE or GET body without any framing unless told its length: say it.
    const headers = options.body === undefined ? options.headers : { 'content-length': String(Buffer.byteLength(options.body)), ...options.headers }
    const req = request({ hostname, port, path: path || '/', method: options.method ?? 'GET', headers }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => {
        body += chunk
      })
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }))
    })
    req.on('error', reject)
    req.end(options.body)
  })
}

/** A raw TCP connection to a loopback port with everything it has received so far as text (for byte-exact requests). */
export function rawConnection(port: number): { socket: Socket, received: () => string } {
  const socket = connect(port, '127.0.0.1')
  let text = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => {
    text += chunk
  })
  return { socket, received: () => text }
}
