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
