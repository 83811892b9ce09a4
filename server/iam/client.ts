import { Agent, request } from 'undici'
import { checkEnvelope } from '../core/iam/envelope'
import { withoutQuery } from '../core/ops/tracing'
import { GatewayError, IamRefusal, iamTimeoutMessage, MESSAGES } from '../http/errors'
import { useGatewayConfig } from '../ops/config'
import { useLogger } from '../ops/logger'
import { useMetrics, type IamEndpoint } from '../ops/metrics'
import { injectTraceHeaders, traced, type Span } from '../ops/tracing/spans'

/** An IAM answer larger than this is refused (502, logged): it would never fit a session anyway. */
export const MAX_IAM_RESPONSE_BYTES = 1024 * 1024

/** Keep-alive connections to the IAM, shared by all routes. */
const iamAgent = new Agent({ keepAliveTimeout: 30_000, connections: 64 })

export interface IamCall {
  /** Which configured endpoint (the metrics' label). */
  endpoint: IamEndpoint
  method: 'GET' | 'POST'
  /** Endpoint path relative to APP_AUTH_BASE_URL (may carry a query). */
  path: string
  body?: Record<string, unknown>
  headers?: Record<string, string>
}

export interface IamAnswer {
  status: number
  /** Parsed JSON, or undefined when the answer was not JSON. */
  json: unknown
}

/** The IAM base address, or the contract's 500 when it is not configured. */
export function requireIamBaseUrl(): string {
  const { baseURL } = useGatewayConfig().config
  if (!baseURL) throw new GatewayError(500, MESSAGES.baseUrlMissing)
  return baseURL
}

/**
 * One call to the IAM: JSON in and out, a timeout from sending to the last byte of the answer (APP_AUTH_TIMEOUT,
 * the contract's 10 s), keep-alive. Network failure: 502; timeout: 504.
 * The answer is returned whatever its status; see `expectIamSuccess` for the envelope rule. Timed and counted in the
 * metrics by endpoint (failures: unreachable, timeout, invalid, status_5xx). With tracing on, a client span
 * `iam <endpoint>` (method, path without its query, status) whose `traceparent` the IAM receives.
 */
export function callIam(call: IamCall): Promise<IamAnswer> {
  return traced(`iam ${call.endpoint}`, 'client', { 'http.request.method': call.method, 'url.path': withoutQuery(call.path) }, span => measuredIamCall(call, span))
}

async function measuredIamCall(call: IamCall, span: Span | undefined): Promise<IamAnswer> {
  const metrics = useMetrics()
  if (!metrics) return requestIam(call, span)
  const started = performance.now()
  try {
    const answer = await requestIam(call, span)
    if (answer.status >= 500) metrics.iamFailures.inc({ endpoint: call.endpoint, reason: 'status_5xx' })
    return answer
  }
  catch (error) {
    const status = error instanceof GatewayError ? error.statusCode : 0
    const reason = status === 504 ? 'timeout' : status === 502 && error instanceof GatewayError && (error.statusMessage === MESSAGES.iamInvalid || error.statusMessage === MESSAGES.iamTooLarge) ? 'invalid' : 'unreachable'
    metrics.iamFailures.inc({ endpoint: call.endpoint, reason })
    throw error
  }
  finally {
    metrics.iamDuration.observe({ endpoint: call.endpoint }, (performance.now() - started) / 1000)
  }
}

async function requestIam(call: IamCall, span: Span | undefined): Promise<IamAnswer> {
  const url = requireIamBaseUrl() + call.path
  const { iamTimeoutSeconds } = useGatewayConfig().config
  const signal = AbortSignal.timeout(iamTimeoutSeconds * 1000)
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...(call.body ? { 'content-type': 'application/json' } : {}),
    ...call.headers,
  }
  if (span) {
    span.setAttribute('server.address', new URL(url).host)
    injectTraceHeaders(span, headers)
  }
  try {
    const response = await request(url, {
      method: call.method,
      dispatcher: iamAgent,
      signal,
      headers,
      body: call.body ? JSON.stringify(call.body) : undefined,
    })
    span?.setAttribute('http.response.status_code', response.statusCode)
    const chunks: Buffer[] = []
    let size = 0
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      size += chunk.length
      if (size > MAX_IAM_RESPONSE_BYTES) {
        response.body.destroy()
        useLogger().warn({ endpoint: call.endpoint, maxBytes: MAX_IAM_RESPONSE_BYTES }, 'IAM trả dữ liệu lớn hơn 1 MiB: đã bỏ.')
        throw new GatewayError(502, MESSAGES.iamTooLarge)
      }
      chunks.push(chunk)
    }
    return { status: response.statusCode, json: parseJson(Buffer.concat(chunks).toString('utf8')) }
  }
  catch (error) {
    if (error instanceof GatewayError) throw error
    if (signal.aborted) throw new GatewayError(504, iamTimeoutMessage(iamTimeoutSeconds))
    // The IAM answered, but not in HTTP that parses (a status such as 700, broken headers).
    if ((error as { name?: string } | null)?.name === 'HTTPParserError') throw new GatewayError(502, MESSAGES.iamInvalid)
    throw new GatewayError(502, MESSAGES.iamUnreachable)
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  }
  catch {
    return undefined
  }
}

/**
 * The contract's envelope rule on an answer: a `code` other than 'API000' is 401 with the IAM's message (cleaned,
 * at most 300 characters); an HTTP error (400-599) without an envelope keeps the IAM's status, message
 * 'IAM trả lỗi HTTP <status>.'; a 2xx that is not JSON, or any other status (3xx, 1xx, 600+): 502 'IAM trả dữ liệu
 * không hợp lệ.'. Returns the parsed JSON.
 */
export function expectIamSuccess(answer: IamAnswer): unknown {
  const envelope = checkEnvelope(answer.json)
  if (!envelope.ok) throw new IamRefusal(401, envelope.message)
  if (answer.status >= 200 && answer.status < 300) {
    if (answer.json === undefined) throw new GatewayError(502, MESSAGES.iamInvalid)
    return answer.json
  }
  if (answer.status < 400 || answer.status > 599) throw new GatewayError(502, MESSAGES.iamInvalid)
  const message = `IAM trả lỗi HTTP ${answer.status}.`
  throw answer.status === 401 || answer.status === 403 ? new IamRefusal(answer.status, message) : new GatewayError(answer.status, message)
}
