import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One exported span as the tests read it: ids in hex, attributes as a plain object. */
export interface ReceivedSpan {
  traceId: string
  spanId: string
  /** '' for a root span. */
  parentSpanId: string
  name: string
  /** OTLP's numbers: 1 internal, 2 server, 3 client. */
  kind: number
  attributes: Record<string, string | number | boolean>
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: number
  /** The resource's service.name. */
  service: string
}

interface OtlpValue { stringValue?: string, intValue?: string | number, boolValue?: boolean, doubleValue?: number }
interface OtlpAttribute { key: string, value: OtlpValue }
interface OtlpBody {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] }
    scopeSpans?: Array<{ spans?: Array<{ traceId: string, spanId: string, parentSpanId?: string, name: string, kind: number, attributes?: OtlpAttribute[], status?: { code?: number } }> }>
  }>
}

function attributesOf(list: OtlpAttribute[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {}
  for (const { key, value } of list ?? []) {
    out[key] = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined) ?? value.boolValue ?? value.doubleValue ?? ''
  }
  return out
}

/**
 * An OTLP/HTTP collector on a free loopback port, as far as the tests need one: it takes `POST /v1/traces` in OTLP's
 * JSON encoding (the gateway's exporter with its default http/json), answers 200, keeps every raw body (to search
 * for secrets byte by byte) and the spans decoded from them.
 */
export async function startOtlpReceiver() {
  const bodies: Buffer[] = []
  const spans: ReceivedSpan[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const raw = Buffer.concat(chunks)
      bodies.push(raw)
      if (req.url === '/v1/traces') {
        const body = JSON.parse(raw.toString('utf8')) as OtlpBody
        for (const resource of body.resourceSpans ?? []) {
          const service = String(attributesOf(resource.resource?.attributes)['service.name'] ?? '')
          for (const scope of resource.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              spans.push({
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? '',
                name: span.name,
                kind: span.kind,
                attributes: attributesOf(span.attributes),
                status: span.status?.code ?? 0,
                service,
              })
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{}')
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    spans,
    /** Every byte received so far, as one text (JSON bodies: UTF-8). */
    rawText: () => Buffer.concat(bodies).toString('utf8'),
    /**
     * Waits (bounded by `timeoutMs`, polled as spans arrive in batches) until `find` returns a value from the spans
     * received so far, and returns it.
     */
    async waitFor<T>(find: (spans: ReceivedSpan[]) => T | undefined | false, timeoutMs = 15_000): Promise<T> {
      const until = Date.now() + timeoutMs
      for (;;) {
        const found = find(spans)
        if (found) return found
        if (Date.now() > until) throw new Error(`the spans awaited did not arrive in ${timeoutMs} ms; received: ${spans.map(span => span.name).join(', ')}`)
        await new Promise(resolve => setTimeout(resolve, 50))
      }
    },
    close: () => {
      const closed = new Promise<void>(resolve => server.close(() => resolve()))
      server.closeAllConnections()
      return closed
    },
  }
}

export type OtlpReceiver = Awaited<ReturnType<typeof startOtlpReceiver>>
