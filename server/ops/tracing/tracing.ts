/**
 * ops/tracing/: OpenTelemetry traces (docs/operations.md, Tracing). The tracer of the process (this file: started
 * from the standard OTEL_* variables, flushed at the end; held in holder.ts) and the spans every concern opens
 * (spans.ts). Off (no OTLP endpoint set) nothing of OpenTelemetry is loaded and useTracing() is undefined: a call site
 * pays one check. Spans are parented explicitly or through the context manager the holder keeps, never through
 * OpenTelemetry's global registration, so an app's own SDK is left as it is.
 * May import: core only (and ops/).
 */
import { samplerChoice, tracingWanted, type SamplerChoice, type TracingEnv } from '../../core/ops/tracing'
import { RequestIds } from './ids'
import { setTracing, useTracing, type Tracing } from './holder'

let starting: Promise<Tracing | undefined> | undefined

/** The name the gateway's spans carry as their service unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) says another. */
export const DEFAULT_SERVICE_NAME = 'svc-auth-gateway'

/**
 * Starts tracing when the OTEL_* variables ask for it (core/ops/tracing.ts tracingWanted); else loads nothing.
 * The sampler (OTEL_TRACES_SAMPLER, _ARG) is read here (core/ops/tracing.ts samplerChoice) and handed to the SDK,
 * which the gateway asks ahead for each request (spans.ts). The SDK reads its other settings itself: the batch
 * (OTEL_BSP_*), the exporter's endpoint, headers and timeout (OTEL_EXPORTER_OTLP_*), the resource
 * (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES). Spans go out in batches over OTLP/HTTP (JSON).
 */
export function startTracing(env: TracingEnv = process.env): Promise<Tracing | undefined> {
  starting ??= tracingWanted(env) ? load(samplerChoice(env)) : Promise.resolve(undefined)
  return starting
}

/** Resolves once tracing is on, or at once when it is off or was never asked to start. */
export function tracingStarted(): Promise<unknown> {
  return starting?.catch(() => undefined) ?? Promise.resolve()
}

/** Loads the SDK and makes the process's tracer with `choice`'s sampler (see startTracing). */
async function load(choice: SamplerChoice): Promise<Tracing> {
  const [api, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, resources, sdk, { OTLPTraceExporter }] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
  ])
  const resource = resources.defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': DEFAULT_SERVICE_NAME }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }))
  const root = choice.root === 'always_on' ? new sdk.AlwaysOnSampler() : choice.root === 'always_off' ? new sdk.AlwaysOffSampler() : new sdk.TraceIdRatioBasedSampler(choice.ratio)
  const sampler = choice.parentBased ? new sdk.ParentBasedSampler({ root }) : root
  const ids = new RequestIds()
  const provider = new sdk.BasicTracerProvider({ resource, sampler, idGenerator: ids, spanProcessors: [new sdk.BatchSpanProcessor(new OTLPTraceExporter())] })
  const notRecorded = sdk.SamplingDecision.NOT_RECORD
  const kind = api.SpanKind.SERVER
  const noAttributes = Object.freeze({})
  const noLinks = Object.freeze([]) as []
  const contexts = new AsyncLocalStorageContextManager().enable()
  const started: Tracing = {
    api,
    tracer: provider.getTracer('svc-auth-gateway'),
    sampled: (parent, traceId, name) => sampler.shouldSample(parent, traceId, name, kind, noAttributes, noLinks).decision !== notRecorded,
    ids,
    propagator: new W3CTraceContextPropagator(),
    contexts,
    shutdown: () => provider.shutdown(),
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
