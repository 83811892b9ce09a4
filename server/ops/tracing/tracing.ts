/**
 * ops/tracing/: OpenTelemetry traces (docs/operations.md, Tracing). The tracer of the process (this file: started
 * from the standard OTEL_* variables, flushed at the end; held in holder.ts) and the spans every concern opens
 * (spans.ts). Off (no OTLP endpoint set) nothing of OpenTelemetry is loaded and useTracing() is undefined: a call site
 * pays one check. On, the main thread records its spans (recorder.ts) and a worker thread of the gateway's, the
 * export thread, makes the SDK's spans of them and exports them (export-thread.ts). Spans are parented explicitly or
 * through the context manager the holder keeps, never through OpenTelemetry's global registration, so an app's own
 * SDK is left as it is.
 * May import: core only (and ops/).
 */
import type { Sampler } from '@opentelemetry/sdk-trace-base'
import { samplerChoice, tracingWanted, type SamplerChoice, type TracingEnv } from '../../core/ops/tracing'
import { useLogger } from '../logger'
import { throttledWarning } from '../throttled-warning'
import { startExportThread } from './export-thread'
import { RequestIds } from './ids'
import { SpanRecorder } from './recorder'
import { setTracing, useTracing, type Tracing } from './holder'

let starting: Promise<Tracing | undefined> | undefined

/** The name the gateway's spans carry as their service unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) says another. */
export const DEFAULT_SERVICE_NAME = 'svc-auth-gateway'

/** The instrumentation scope of the gateway's spans. */
const SCOPE_NAME = 'svc-auth-gateway'

/**
 * Starts tracing when the OTEL_* variables ask for it (core/ops/tracing.ts tracingWanted); else loads nothing.
 * The sampler (OTEL_TRACES_SAMPLER, _ARG) is read here (core/ops/tracing.ts samplerChoice): the SDK's own sampler,
 * asked on the main thread for each request and each span (recorder.ts). The SDK reads its other settings
 * itself, on the export thread: the batch (OTEL_BSP_*), the exporter's endpoint, headers and timeout
 * (OTEL_EXPORTER_OTLP_*), the resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES). Spans go out in batches over
 * OTLP/HTTP (JSON).
 */
export function startTracing(env: TracingEnv = process.env): Promise<Tracing | undefined> {
  starting ??= tracingWanted(env) ? load(samplerChoice(env)) : Promise.resolve(undefined)
  return starting
}

/** Resolves once tracing is on, or at once when it is off or was never asked to start. */
export function tracingStarted(): Promise<unknown> {
  return starting?.catch(() => undefined) ?? Promise.resolve()
}

/**
 * Loads what the main thread needs (the API, the context manager, the propagator, the SDK's sampler) and starts the
 * export thread, where the SDK makes and sends the spans (export-thread.ts); the spans recorded here go there
 * (recorder.ts). A failure of the thread is said in a `tracing` error line (the thread is started again), spans
 * dropped in a warning at most once a minute.
 */
async function load(choice: SamplerChoice): Promise<Tracing> {
  const [api, { AsyncLocalStorageContextManager }, core, sdk] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/sdk-trace-base'),
  ])
  const root = choice.root === 'always_on' ? new sdk.AlwaysOnSampler() : choice.root === 'always_off' ? new sdk.AlwaysOffSampler() : new sdk.TraceIdRatioBasedSampler(choice.ratio)
  const parentBased = choice.parentBased ? new sdk.ParentBasedSampler({ root }) : root
  // Without a parent span (every request unless APP_OTEL_TRUST_INCOMING) a parent-based sampler asks its root sampler:
  // asked directly then, a step less on every request.
  const sampler: Sampler = {
    shouldSample: (context, ...rest) => (context === api.ROOT_CONTEXT ? root : parentBased).shouldSample(context, ...rest),
    toString: () => parentBased.toString(),
  }
  const ids = new RequestIds()
  const droppedWarning = throttledWarning(60_000)
  const thread = startExportThread(DEFAULT_SERVICE_NAME, SCOPE_NAME, {
    failed: (error, retryMs) => useLogger().error({ type: 'tracing', error: error.message }, `OpenTelemetry: luồng xuất trace đã dừng, chạy lại sau ${retryMs / 1000} giây; span trong lúc đó bị bỏ.`),
    dropped: dropped => droppedWarning(`OpenTelemetry: luồng xuất trace không theo kịp hoặc đang dừng, đã bỏ ${dropped} span từ khi khởi động.`),
  })
  const contexts = new AsyncLocalStorageContextManager().enable()
  const started: Tracing = {
    api,
    // Every sampler built above samples the children of a sampled span of the process (recorder.ts startChild).
    tracer: new SpanRecorder(api, core, sampler, ids, thread, sdk.SamplingDecision.RECORD_AND_SAMPLED, true),
    propagator: new core.W3CTraceContextPropagator(),
    contexts,
    shutdown: () => thread.shutdown(),
  }
  setTracing(started)
  return started
}

/** Sends the spans still buffered and stops tracing, within `timeoutMs` (the end of a drain); nothing when off. */
export async function stopTracing(timeoutMs: number): Promise<void> {
  const tracing = useTracing()
  if (!tracing) return
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    tracing.shutdown().catch(() => undefined),
    new Promise((resolve) => {
      timer = setTimeout(resolve, timeoutMs)
    }),
  ])
  clearTimeout(timer)
}
