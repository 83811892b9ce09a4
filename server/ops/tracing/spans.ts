/**
 * The gateway's spans, for every concern: a request's server span, a call's client span, a named step (login,
 * logout, renewal, revocation) with its outcome, and the ids a log line carries. Every attribute is chosen here or
 * by a caller from facts that hold no secret: methods, paths without their query, host names, status codes, outcomes;
 * never a header, a cookie, a token, a password, an OTP or an authorization code (docs/operations.md, Tracing).
 */
import type { Attributes, Span, SpanContext } from '@opentelemetry/api'
import type { IncomingHttpHeaders } from 'node:http'
import { capLogField, MAX_LOGGED_PATH } from '../../core/ops/log-field'
import { withoutQuery } from '../../core/ops/tracing'
import { useTracing, type Tracing } from './holder'

export type { Span } from '@opentelemetry/api'

/** The attribute a named step's outcome is written to. */
export const OUTCOME_ATTRIBUTE = 'svc_gateway.outcome'

/** The path of a request target without its query (the callback's carries the authorization code), cut as an access line's is. */
export function pathOf(url: string): string {
  return capLogField(withoutQuery(url), MAX_LOGGED_PATH)
}

/** What a server span starts from: the request as the gate has worked it out. */
export interface RequestFacts {
  method: string
  url: string
  headers: IncomingHttpHeaders
  /** The metrics' route group: the span's `http.route`. */
  group: string
  scheme: string
  client: string
}

/**
 * The server span of one request (`<METHOD> <group>`), to be ended by endRequestSpan. Its parent is the incoming
 * `traceparent` only when `trustIncoming` (APP_OTEL_TRUST_INCOMING): a browser chooses no trace id and forces no
 * sampling by default. The tracer's sampler (OTEL_TRACES_SAMPLER) is asked once (recorder.ts startRequest): a
 * request it does not sample gets only its ids, in a non-recording span (trace id, a span id of its own, sampled
 * flag 0: what the SDK would have made), which startCallSpan hands on to the backend. Such a request is never made
 * current (runUnder): it costs two ids and the sampler's answer.
 */
export function startRequestSpan(t: Tracing, request: RequestFacts, trustIncoming: boolean): Span {
  const { api } = t
  const parent = trustIncoming && request.headers.traceparent !== undefined
    ? t.propagator.extract(api.ROOT_CONTEXT, request.headers, api.defaultTextMapGetter)
    : api.ROOT_CONTEXT
  const span = t.tracer.startRequest(`${request.method} ${request.group}`, api.SpanKind.SERVER, parent)
  if (span.isRecording()) span.setAttributes({
    'http.request.method': request.method,
    'url.path': pathOf(request.url),
    'url.scheme': request.scheme,
    'http.route': request.group,
    'client.address': request.client,
  })
  return span
}

/** Ends a request's server span with its answer's status (0: the client left before any answer). */
export function endRequestSpan(span: Span, status: number): void {
  if (!span.isRecording()) return
  if (status > 0) span.setAttribute('http.response.status_code', status)
  if (status >= 500 || status === 0) span.setStatus({ code: 2 })
  span.end()
}

/**
 * Runs `work` with `span` as the current span: the calls it makes (IAM, provider, Redis) become its children. The
 * current span lives in an AsyncLocalStorage, which costs every promise of the process something once used (Node 20,
 * 22): paths that know their span (the proxy, the tunnel) pass it along instead, and a span not sampled is never made
 * current (its children would not be sampled either: the calls run as with tracing off).
 */
export function runUnder<T>(span: Span, work: () => T): T {
  const t = useTracing()
  return t && span.isRecording() ? t.contexts.with(t.api.trace.setSpan(t.api.ROOT_CONTEXT, span), work) : work()
}

/** An error's type for `error.type`: its HTTP status when it has one, else its class name (never its message). */
function errorType(error: unknown): string {
  const status = (error as { statusCode?: unknown } | null)?.statusCode
  if (typeof status === 'number') return String(status)
  return (error as Error | null)?.name || 'Error'
}

/** Marks a span failed with the error's type. */
export function failSpan(span: Span, error: unknown): void {
  span.setAttribute('error.type', errorType(error))
  span.setStatus({ code: 2 })
}

/**
 * Runs `work` in a span of its own, child of the current one (a client call: `kind` 'client'; a named step:
 * 'internal'); a thrown error marks it failed. With tracing off, `work` runs with no span and nothing else is done.
 * Without a current span (a request not sampled, work outside any request) there is no span either, unless `root`
 * (the start's discovery of the provider): a request not sampled never makes traces of its own from its calls.
 */
export async function traced<T>(name: string, kind: 'client' | 'internal', attributes: Attributes, work: (span: Span | undefined) => Promise<T>, root = false): Promise<T> {
  const t = useTracing()
  if (!t) return work(undefined)
  const parent = t.contexts.active()
  if (!root && !t.api.trace.getSpan(parent)) return work(undefined)
  const span = t.tracer.startSpan(name, { kind: kind === 'client' ? t.api.SpanKind.CLIENT : t.api.SpanKind.INTERNAL, attributes }, parent)
  try {
    return await t.contexts.with(t.api.trace.setSpan(parent, span), () => work(span))
  }
  catch (error) {
    failSpan(span, error)
    throw error
  }
  finally {
    span.end()
  }
}

/**
 * A client span under `parent` (a request's server span) for a call made outside any current span: the proxy's
 * backend call, a WebSocket handshake. Its `traceparent` is written into `headers`, so the backend's spans join the
 * trace with this span as their parent. End it when the call ends. A request not sampled gets no span (undefined):
 * the backend receives the request's own unsampled traceparent, and records nothing either when it follows it.
 * A sampled request's call span asks no sampler (recorder.ts startChild) and its headers are written directly.
 */
export function startCallSpan(parent: Span, name: string, attributes: () => Attributes, headers: Record<string, string | string[]>): Span | undefined {
  const t = useTracing()
  if (!t) return undefined
  const context = parent.spanContext()
  if (!(context.traceFlags & 1)) {
    writeTraceHeaders(context, headers)
    return undefined
  }
  const child = t.tracer.startChild(parent, name, t.api.SpanKind.CLIENT, attributes())
  if (child) {
    writeTraceHeaders(child.spanContext(), headers)
    return child
  }
  const span = t.tracer.startSpan(name, { kind: t.api.SpanKind.CLIENT, attributes: attributes() }, t.api.trace.setSpan(t.api.ROOT_CONTEXT, parent))
  injectTraceHeaders(span, headers)
  return span
}

/**
 * `traceparent` and `tracestate` for a span of the process, written as the W3C propagator writes them (its flags
 * are 0 or 1): the proxy's every request, without the propagator's work.
 */
function writeTraceHeaders({ traceId, spanId, traceFlags, traceState }: SpanContext, headers: Record<string, string | string[]>): void {
  headers.traceparent = `00-${traceId}-${spanId}-0${traceFlags & 1}`
  if (traceState) headers.tracestate = traceState.serialize()
  else if (headers.tracestate !== undefined) delete headers.tracestate
}

/** Writes `traceparent` (and `tracestate`) for `span` into outgoing headers, so the next hop's spans join the trace. */
export function injectTraceHeaders(span: Span, headers: Record<string, string | string[]>): void {
  const t = useTracing()
  if (!t) return
  // `delete` only when there is something to remove: it turns the object into a slow dictionary for undici's walk.
  if (headers.traceparent !== undefined) delete headers.traceparent
  if (headers.tracestate !== undefined) delete headers.tracestate
  t.propagator.inject(t.api.trace.setSpan(t.api.ROOT_CONTEXT, span), headers, t.api.defaultTextMapSetter)
}

/** The ids a log line carries to join its trace: only for a sampled span (an unsampled trace is never exported). */
export function traceFields(span: Span | undefined): { traceId: string, spanId: string } | undefined {
  if (!span) return undefined
  const { traceId, spanId, traceFlags } = span.spanContext()
  return traceFlags & 1 ? { traceId, spanId } : undefined
}

/** The current span's ids for a log line (see traceFields); undefined when tracing is off or no span is current. */
export function currentTraceFields(): { traceId: string, spanId: string } | undefined {
  const t = useTracing()
  return t && traceFields(t.api.trace.getSpan(t.contexts.active()))
}

/** The current span (the request's, or a call's within it); undefined when tracing is off or none is current. */
export function currentSpan(): Span | undefined {
  const t = useTracing()
  return t && t.api.trace.getSpan(t.contexts.active())
}
