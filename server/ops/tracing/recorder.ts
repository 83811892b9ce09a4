/**
 * The request thread's tracer: its spans are records (ids, times, name, kind, attributes, status, events, links),
 * handed on ended to the export thread (export-thread.ts), where the SDK makes its own spans of them, with the same
 * ids and times, and exports them. The SDK's spans, batches and exporter never run on the thread that serves requests:
 * measured, they cost a busy gateway several times their own work there (bench/RESULTS.md, History, 2026-11-27 15:56).
 * What a span keeps follows the SDK's span (sdk-trace's SpanImpl) to the letter: its clock, the attribute values it
 * accepts, the status it lets change; the limits on attributes and their lengths are the SDK's to apply on the export
 * thread. The sampler is the SDK's, asked as the SDK's tracer asks it, except for a sampled span's child, which every
 * sampler the gateway builds would sample (startChild); the ids come from ids.ts.
 */
import type * as OtelApi from '@opentelemetry/api'
import type * as OtelCore from '@opentelemetry/core'
import type { Attributes, AttributeValue, Context, Exception, HrTime, Link, Span, SpanContext, SpanOptions, SpanStatus, TimeInput, Tracer, TraceState } from '@opentelemetry/api'
import type { Sampler } from '@opentelemetry/sdk-trace-base'
import type { RequestIds } from './ids'

/** One ended span as the export thread receives it (as JSON): what the SDK needs to make it again. */
export interface SpanRecord {
  name: string
  kind: number
  traceId: string
  spanId: string
  /** The parent's span id and whether it came from another process (a trusted incoming traceparent). */
  parent?: { spanId: string, remote: boolean }
  /** The span's tracestate (its parent's, or its sampler's), serialized. */
  traceState?: string
  /** HrTime ([seconds, nanoseconds] since the epoch), as the SDK keeps them. */
  start: HrTime
  end: HrTime
  attributes: Attributes
  status?: { code: number, message?: string }
  events?: { name: string, attributes: Attributes, time: HrTime }[]
  links?: { traceId: string, spanId: string, traceFlags: number, remote: boolean, traceState?: string, attributes: Attributes }[]
}

/** Where ended records go (the export thread). */
export interface RecordSink {
  push(record: SpanRecord): void
}

/** What of @opentelemetry/core the recorder uses: handed in, as it is loaded only once tracing is on. */
export type CoreTools = Pick<typeof OtelCore, 'addHrTimes' | 'hrTime' | 'isAttributeValue' | 'isTimeInput' | 'isTimeInputHrTime' | 'isTracingSuppressed' | 'millisToHrTime' | 'sanitizeAttributes'>

/**
 * Events and links a span keeps at most, the oldest dropped first (the SDK's defaults for OTEL_SPAN_EVENT_COUNT_LIMIT
 * and OTEL_SPAN_LINK_COUNT_LIMIT): a span's record stays bounded here; the SDK applies the configured limits again.
 */
const MAX_EVENTS = 128
const MAX_LINKS = 128

/** The API's SpanStatusCode values. */
const UNSET = 0
const OK = 1
const ERROR = 2

/** What a request's server span is sampled with (startRequest): as the SDK's tracer asks for a span given neither. */
const NO_ATTRIBUTES: Attributes = Object.freeze({})
const NO_LINKS: Link[] = Object.freeze([]) as unknown as Link[]

/** The process's time origin: a getter into Node's C++ each time it is read. */
const timeOrigin = performance.timeOrigin

/** A span being recorded on the request thread: the API's Span, kept as a record until it ends. */
class RecordedSpan implements Span {
  private ended = false
  /** The SDK's clock: the start from Date.now(), later times the start plus the monotonic time since. */
  private readonly perfStart = performance.now()
  private readonly perfOffset: number
  private readonly startProvided: boolean

  constructor(private readonly context: SpanContext, private readonly record: SpanRecord, private readonly sink: RecordSink, private readonly core: CoreTools, startTime: TimeInput | undefined) {
    const now = Date.now()
    this.perfOffset = now - (this.perfStart + timeOrigin)
    this.startProvided = startTime != null
    record.start = this.time(startTime ?? now)
  }

  /** A time given (the API's TimeInput), or now, as the SDK's span reads it. */
  private time(input: TimeInput | undefined): HrTime {
    const { core } = this
    // A number up to performance.now() is a performance timestamp, moved onto the wall clock the start was read from.
    if (typeof input === 'number' && input <= performance.now()) return core.hrTime(input + this.perfOffset)
    if (typeof input === 'number') return core.millisToHrTime(input)
    if (input instanceof Date) return core.millisToHrTime(input.getTime())
    if (core.isTimeInputHrTime(input)) return [input[0], input[1]]
    if (this.startProvided) return core.millisToHrTime(Date.now())
    return core.addHrTimes(this.record.start, core.millisToHrTime(performance.now() - this.perfStart))
  }

  spanContext(): SpanContext {
    return this.context
  }

  setAttribute(key: string, value: AttributeValue): this {
    // What the SDK's span refuses is left out (a value that is not a string, number, boolean or array of one kind).
    if (value == null || this.ended || key.length === 0 || !this.core.isAttributeValue(value)) return this
    this.record.attributes[key] = Array.isArray(value) ? value.slice() as AttributeValue : value
    return this
  }

  setAttributes(attributes: Attributes): this {
    for (const key in attributes) {
      if (Object.prototype.hasOwnProperty.call(attributes, key)) this.setAttribute(key, attributes[key]!)
    }
    return this
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.ended) return this
    const { core } = this
    let attributes = attributesOrTime as Attributes | undefined
    if (core.isTimeInput(attributesOrTime)) {
      if (!core.isTimeInput(time)) time = attributesOrTime
      attributes = undefined
    }
    const events = this.record.events ??= []
    if (events.length >= MAX_EVENTS) events.shift()
    events.push({ name, attributes: core.sanitizeAttributes(attributes), time: this.time(time) })
    return this
  }

  addLink(link: Link): this {
    if (this.ended) return this
    const links = this.record.links ??= []
    if (links.length >= MAX_LINKS) links.shift()
    const { traceId, spanId, traceFlags, traceState, isRemote } = link.context
    links.push({ traceId, spanId, traceFlags, remote: isRemote === true, traceState: traceState?.serialize(), attributes: this.core.sanitizeAttributes(link.attributes) })
    return this
  }

  addLinks(links: Link[]): this {
    for (const link of links) this.addLink(link)
    return this
  }

  /** As the SDK: UNSET never replaces a status, and OK is final; only an ERROR keeps its message. */
  setStatus(status: SpanStatus): this {
    if (this.ended || status.code === UNSET || this.record.status?.code === OK) return this
    this.record.status = status.code === ERROR && typeof status.message === 'string' ? { code: ERROR, message: status.message } : { code: status.code }
    return this
  }

  updateName(name: string): this {
    if (!this.ended) this.record.name = name
    return this
  }

  end(endTime?: TimeInput): void {
    if (this.ended) return
    this.ended = true
    this.record.end = this.time(endTime)
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
 * The tracer the gateway's spans start from (spans.ts), as the SDK's tracer starts them: none where tracing is
 * suppressed; the parent from the context given (unless `root`); the sampler asked with the trace id the span will
 * have and its name, kind, attributes and links; a recording span when it samples, else a non-recording span with
 * the ids (sampled flag 0) for propagation.
 */
export class SpanRecorder implements Tracer {
  constructor(
    private readonly api: typeof OtelApi,
    private readonly core: CoreTools,
    private readonly sampler: Sampler,
    private readonly ids: RequestIds,
    private readonly sink: RecordSink,
    private readonly recordAndSample: number,
    /** Whether the sampler samples every child of a sampled span of this process (see startChild). */
    private readonly samplesChildren: boolean,
  ) {}

  /**
   * A request's server span (`name`, `kind`) under `parent`: a trusted incoming traceparent's context, else the root.
   * The SDK's tracer would ask its sampler on the same facts for startSpan(name, { kind }, parent): the parent's trace
   * id (else a new one), the name, the kind, no attributes, no links. Asked once here, and a sampled span is made
   * from that answer directly. Not sampled: a non-recording span with the ids the SDK would have given it (a span id of
   * its own, sampled flag 0), which a proxied request hands on to its backend. `parent` is never a context where
   * tracing is suppressed (the root, or one the propagator extracted from it).
   */
  startRequest(name: string, kind: number, parent: Context): Span {
    const { api } = this
    const remote = api.trace.getSpanContext(parent)
    const validParent = remote !== undefined && api.isSpanContextValid(remote) ? remote : undefined
    const traceId = validParent?.traceId ?? this.ids.generateTraceId()
    const decision = this.sampler.shouldSample(parent, traceId, name, kind, NO_ATTRIBUTES, NO_LINKS)
    const spanId = this.ids.generateSpanId()
    const traceState = decision.traceState ?? validParent?.traceState
    if (decision.decision !== this.recordAndSample) return api.trace.wrapSpanContext({ traceId, spanId, traceFlags: 0, traceState })
    const span = this.recorded(name, kind, traceId, spanId, validParent && { spanId: validParent.spanId, remote: validParent.isRemote === true }, traceState, undefined)
    return decision.attributes ? span.setAttributes(decision.attributes) : span
  }

  /**
   * A child of `parent`, a sampled span of this recorder's, sampled without asking the sampler, which would sample it
   * (`samplesChildren`: true of every sampler the gateway builds, core/ops/tracing.ts SamplerChoice: a parent-based
   * one samples a sampled local parent's children, `always_on` every span, and `traceidratio` decides on the trace id
   * alone, which the parent was sampled on). Its tracestate is the parent's, as the SDK's. Undefined when `parent` is
   * not such a span or the sampler might answer otherwise: startSpan then. The backend call of every sampled
   * proxied request takes this path.
   */
  startChild(parent: Span, name: string, kind: number, attributes: Attributes): Span | undefined {
    if (!this.samplesChildren || !(parent instanceof RecordedSpan) || !parent.isRecording()) return undefined
    const { traceId, spanId: parentId, traceState } = parent.spanContext()
    return this.recorded(name, kind, traceId, this.ids.generateSpanId(), { spanId: parentId, remote: false }, traceState, undefined).setAttributes(attributes)
  }

  startSpan(name: string, options: SpanOptions = {}, context: Context = this.api.ROOT_CONTEXT): Span {
    const { api, core } = this
    if (core.isTracingSuppressed(context)) return api.trace.wrapSpanContext(api.INVALID_SPAN_CONTEXT)
    const parentContext = options.root ? api.trace.deleteSpan(context) : context
    const parent = api.trace.getSpanContext(parentContext)
    const validParent = parent !== undefined && api.isSpanContextValid(parent) ? parent : undefined
    // The span id first, then a trace id when there is no parent: the SDK's order.
    const spanId = this.ids.generateSpanId()
    const traceId = validParent?.traceId ?? this.ids.generateTraceId()
    const kind = options.kind ?? api.SpanKind.INTERNAL
    const links = (options.links ?? []).map(link => ({ context: link.context, attributes: core.sanitizeAttributes(link.attributes) }))
    const attributes = core.sanitizeAttributes(options.attributes)
    const decision = this.sampler.shouldSample(parentContext, traceId, name, kind, attributes, links)
    const traceState = decision.traceState ?? validParent?.traceState
    // Only RECORD_AND_SAMPLED is exported (the SDK's batch processor drops RECORD-only spans): none of the standard
    // samplers the gateway offers answers RECORD alone, so a span is recorded exactly when it is sampled.
    if (decision.decision !== this.recordAndSample) return api.trace.wrapSpanContext({ traceId, spanId, traceFlags: 0, traceState })
    const span = this.recorded(name, kind, traceId, spanId, validParent && { spanId: validParent.spanId, remote: validParent.isRemote === true }, traceState, options.startTime)
    if (links.length) span.addLinks(links)
    return span.setAttributes(Object.assign(attributes, decision.attributes))
  }

  /** A sampled span being recorded, with no attributes yet. */
  private recorded(name: string, kind: number, traceId: string, spanId: string, parent: SpanRecord['parent'], traceState: TraceState | undefined, startTime: TimeInput | undefined): RecordedSpan {
    const record: SpanRecord = { name, kind, traceId, spanId, parent, traceState: traceState?.serialize(), start: [0, 0], end: [0, 0], attributes: {} }
    return new RecordedSpan({ traceId, spanId, traceFlags: 1, traceState }, record, this.sink, this.core, startTime)
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...rest: unknown[]): ReturnType<F> {
    const fn = rest.pop() as F
    const [options, context] = rest as [SpanOptions | undefined, Context | undefined]
    const parent = context ?? this.api.context.active()
    const span = this.startSpan(name, options, parent)
    return this.api.context.with(this.api.trace.setSpan(parent, span), fn as (span: Span) => ReturnType<F>, undefined, span)
  }
}
