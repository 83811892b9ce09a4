/**
 * The main thread's tracer: its spans are records (ids, times, name, kind, attributes, status), handed on ended to
 * the export thread (export-thread.ts), where the SDK makes its own spans of them, with the same ids and times, and
 * exports them. The SDK's spans, batches and exporter never run on the thread that serves requests: measured, they
 * cost a busy gateway several times their own work there (bench/RESULTS.md, History, 2026-11-27 16:00 UTC).
 * The sampler is the SDK's, asked here as the SDK's tracer would ask it; the ids come from ids.ts.
 */
import type * as OtelApi from '@opentelemetry/api'
import type { Attributes, AttributeValue, Context, Exception, Link, Span, SpanContext, SpanOptions, SpanStatus, TimeInput, Tracer } from '@opentelemetry/api'
import type { Sampler } from '@opentelemetry/sdk-trace-base'
import type { RequestIds } from './ids'

/** One ended span as the export thread receives it (structured-cloned): what the SDK needs to make it again. */
export interface SpanRecord {
  name: string
  kind: number
  traceId: string
  spanId: string
  /** The parent's span id and whether it came from another process (a trusted incoming traceparent). */
  parent?: { spanId: string, remote: boolean }
  traceState?: string
  /** HrTime ([seconds, nanoseconds] since the epoch), as the SDK keeps them. */
  start: [number, number]
  end: [number, number]
  attributes: Attributes
  status?: SpanStatus
  events?: { name: string, attributes?: Attributes, time: [number, number] }[]
  links?: { traceId: string, spanId: string, traceFlags: number, traceState?: string, attributes?: Attributes }[]
}

/** Where ended records go (the export thread). */
export interface RecordSink {
  push(record: SpanRecord): void
}

/** The process's time origin (milliseconds since the epoch): a getter into Node's C++ each time it is read. */
const timeOrigin = performance.timeOrigin

/** Now as HrTime since the epoch, as the SDK reads it (performance.timeOrigin + performance.now()). */
export function hrNow(): [number, number] {
  return millisToHr(timeOrigin + performance.now())
}

function millisToHr(ms: number): [number, number] {
  const seconds = Math.trunc(ms / 1000)
  const nanos = Math.round((ms - seconds * 1000) * 1e6)
  return nanos >= 1e9 ? [seconds + 1, nanos - 1e9] : [seconds, nanos]
}

/** A time a caller gives (the API's TimeInput) as HrTime since the epoch, read as the SDK reads it. */
export function toHrTime(time: TimeInput | undefined): [number, number] {
  if (time === undefined) return hrNow()
  if (Array.isArray(time)) return [time[0], time[1]]
  if (time instanceof Date) return millisToHr(time.getTime())
  // A number below the process's time origin is a performance.now() reading, as in the SDK.
  return millisToHr(time < timeOrigin ? timeOrigin + time : time)
}

/** A span being recorded on the main thread: the API's Span, kept as a record until it ends. */
class RecordedSpan implements Span {
  private ended = false

  constructor(private readonly context: SpanContext, private readonly record: SpanRecord, private readonly sink: RecordSink) {}

  spanContext(): SpanContext {
    return this.context
  }

  setAttribute(key: string, value: AttributeValue): this {
    // Values are checked by the SDK's span on the export thread, as setAttribute would check them.
    if (!this.ended && value !== undefined && value !== null) this.record.attributes[key] = value
    return this
  }

  setAttributes(attributes: Attributes): this {
    for (const key in attributes) this.setAttribute(key, attributes[key]!)
    return this
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.ended) return this
    const isTime = typeof attributesOrTime === 'number' || Array.isArray(attributesOrTime) || attributesOrTime instanceof Date
    const attributes = isTime ? undefined : attributesOrTime as Attributes | undefined
    ;(this.record.events ??= []).push({ name, attributes: attributes && { ...attributes }, time: toHrTime(isTime ? attributesOrTime as TimeInput : time) })
    return this
  }

  addLink(link: Link): this {
    if (this.ended) return this
    const { traceId, spanId, traceFlags, traceState } = link.context
    ;(this.record.links ??= []).push({ traceId, spanId, traceFlags, traceState: traceState?.serialize(), attributes: link.attributes && { ...link.attributes } })
    return this
  }

  addLinks(links: Link[]): this {
    for (const link of links) this.addLink(link)
    return this
  }

  setStatus(status: SpanStatus): this {
    if (!this.ended) this.record.status = { code: status.code, message: status.message }
    return this
  }

  updateName(name: string): this {
    if (!this.ended) this.record.name = name
    return this
  }

  end(endTime?: TimeInput): void {
    if (this.ended) return
    this.ended = true
    this.record.end = toHrTime(endTime)
    this.sink.push(this.record)
  }

  isRecording(): boolean {
    return !this.ended
  }

  /** As the SDK records one (an `exception` event); the gateway itself never calls it (a message may hold anything). */
  recordException(exception: Exception, time?: TimeInput): void {
    const attributes: Attributes = {}
    if (typeof exception === 'string') {
      attributes['exception.message'] = exception
    }
    else if (exception) {
      if (exception.code) attributes['exception.type'] = exception.code.toString()
      else if (exception.name) attributes['exception.type'] = exception.name
      if (exception.message) attributes['exception.message'] = exception.message
      if (exception.stack) attributes['exception.stacktrace'] = exception.stack
    }
    if (attributes['exception.type'] || attributes['exception.message']) this.addEvent('exception', attributes, time)
  }
}

/**
 * The tracer the gateway's spans start from (spans.ts): asks the sampler as the SDK's tracer does (with the parent of
 * the context given, the trace id it will have and the span's name, kind, attributes and links), and returns a
 * recording span when it samples, else a non-recording span with the ids (sampled flag 0) for propagation.
 */
export class SpanRecorder implements Tracer {
  constructor(
    private readonly api: typeof OtelApi,
    private readonly sampler: Sampler,
    private readonly ids: RequestIds,
    private readonly sink: RecordSink,
    private readonly recordAndSample: number,
  ) {}

  startSpan(name: string, options: SpanOptions = {}, context: Context = this.api.ROOT_CONTEXT): Span {
    const { api } = this
    const parentContext = options.root ? api.trace.deleteSpan(context) : context
    const parent = api.trace.getSpanContext(parentContext)
    const validParent = parent !== undefined && api.isSpanContextValid(parent) ? parent : undefined
    const traceId = validParent?.traceId ?? this.ids.generateTraceId()
    const spanId = this.ids.generateSpanId()
    const kind = options.kind ?? api.SpanKind.INTERNAL
    const attributes = { ...options.attributes }
    const links = options.links ?? []
    const decision = this.sampler.shouldSample(parentContext, traceId, name, kind, attributes, links)
    const traceState = decision.traceState ?? validParent?.traceState
    // Only RECORD_AND_SAMPLED is exported (the SDK's batch processor drops RECORD-only spans): none of the standard
    // samplers the gateway offers answers RECORD alone, so a span is recorded exactly when it is sampled.
    if (decision.decision !== this.recordAndSample) return api.trace.wrapSpanContext({ traceId, spanId, traceFlags: 0, traceState })
    if (decision.attributes) Object.assign(attributes, decision.attributes)
    const record: SpanRecord = {
      name,
      kind,
      traceId,
      spanId,
      parent: validParent && { spanId: validParent.spanId, remote: validParent.isRemote === true },
      traceState: traceState?.serialize(),
      start: toHrTime(options.startTime),
      end: [0, 0],
      attributes,
    }
    const span = new RecordedSpan({ traceId, spanId, traceFlags: 1, traceState }, record, this.sink)
    if (links.length) span.addLinks(links)
    return span
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...rest: unknown[]): ReturnType<F> {
    const fn = rest.pop() as F
    const [options, context] = rest as [SpanOptions | undefined, Context | undefined]
    const parent = context ?? this.api.context.active()
    const span = this.startSpan(name, options, parent)
    return this.api.context.with(this.api.trace.setSpan(parent, span), fn as (span: Span) => ReturnType<F>, undefined, span)
  }
}
