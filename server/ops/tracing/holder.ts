/**
 * The process's tracing once it is on (tracing.ts starts it): a file of its own, below every span helper, so that the
 * chain from a call site to it stays short.
 */
import type * as OtelApi from '@opentelemetry/api'
import type { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import type { W3CTraceContextPropagator } from '@opentelemetry/core'

/** The tracer of the process and what its spans need, loaded once tracing is on. */
export interface Tracing {
  /** OpenTelemetry's API (trace.setSpan, SpanKind, SpanStatusCode, ROOT_CONTEXT), loaded with the SDK. */
  readonly api: typeof OtelApi
  /**
   * The main thread's tracer (recorder.ts SpanRecorder): its spans are made again and exported on the export thread.
   * Besides the API's startSpan, the two short ways of the proxy's every sampled request: a request's server span
   * (startRequest) and a sampled span's child (startChild: undefined when it cannot take that way).
   */
  readonly tracer: OtelApi.Tracer & {
    startRequest: (name: string, kind: OtelApi.SpanKind, parent: OtelApi.Context) => OtelApi.Span
    startChild: (parent: OtelApi.Span, name: string, kind: OtelApi.SpanKind, attributes: OtelApi.Attributes) => OtelApi.Span | undefined
  }
  /** `traceparent` and `tracestate`, read (APP_OTEL_TRUST_INCOMING) and written (the backend, the IAM, the provider). */
  readonly propagator: W3CTraceContextPropagator
  /** The span a piece of work runs under: set around each request's dispatch, read by the calls it makes. */
  readonly contexts: AsyncLocalStorageContextManager
  /** Hands the export thread what is still recorded, lets it send what it holds, and stops it (the end of a drain). */
  readonly shutdown: () => Promise<void>
}

let tracing: Tracing | undefined

/** The process's tracing, or undefined when it is off (the OTEL_* variables turn it on). */
export function useTracing(): Tracing | undefined {
  return tracing
}

/** Sets the process's tracing (tracing.ts, once it is on). */
export function setTracing(started: Tracing): void {
  tracing = started
}
