import * as api from '@opentelemetry/api'
import * as core from '@opentelemetry/core'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { AlwaysOffSampler, AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, SamplingDecision, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace-base'
import { Worker } from 'node:worker_threads'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ExportThread, startExportThread } from '../../server/ops/tracing/export-thread'
import { RequestIds } from '../../server/ops/tracing/ids'
import { SpanRecorder, type SpanRecord } from '../../server/ops/tracing/recorder'
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver'

const recordedBy = (sampler: Sampler) => {
  const records: SpanRecord[] = []
  const recorder = new SpanRecorder(api, core, sampler, new RequestIds(), { push: record => records.push(record) }, SamplingDecision.RECORD_AND_SAMPLED, true)
  return { recorder, records }
}

const remoteParent = (traceparent: string, tracestate?: string) => new W3CTraceContextPropagator().extract(api.ROOT_CONTEXT, { traceparent, ...(tracestate ? { tracestate } : {}) }, api.defaultTextMapGetter)

describe('SpanRecorder: the main thread\'s spans, kept as records', () => {
  it('a sampled span is recording until it ends; it is then one record, with what was set on it before its end only', () => {
    const { recorder, records } = recordedBy(new AlwaysOnSampler())
    const span = recorder.startSpan('GET api', { kind: api.SpanKind.SERVER, attributes: { 'http.route': 'api' } })
    expect(span.isRecording()).toBe(true)
    const { traceId, spanId, traceFlags } = span.spanContext()
    expect([traceId, spanId, traceFlags]).toEqual([expect.stringMatching(/^[0-9a-f]{32}$/), expect.stringMatching(/^[0-9a-f]{16}$/), 1])
    span.setAttributes({ 'http.request.method': 'GET', 'url.path': '/api/ping' }).setAttribute('http.response.status_code', 502)
    span.setStatus({ code: api.SpanStatusCode.ERROR })
    expect(records).toEqual([])
    span.end()
    span.setAttribute('late', 'dropped')
    span.end()
    expect(span.isRecording()).toBe(false)
    expect(records).toEqual([{
      name: 'GET api',
      kind: api.SpanKind.SERVER,
      traceId,
      spanId,
      parent: undefined,
      traceState: undefined,
      start: expect.any(Array),
      end: expect.any(Array),
      attributes: { 'http.route': 'api', 'http.request.method': 'GET', 'url.path': '/api/ping', 'http.response.status_code': 502 },
      status: { code: api.SpanStatusCode.ERROR },
    }])
    const [{ start, end }] = records
    expect(end[0] * 1e9 + end[1]).toBeGreaterThanOrEqual(start[0] * 1e9 + start[1])
    expect(Math.abs(start[0] - Date.now() / 1000)).toBeLessThan(5)
  })

  it('a child has its parent\'s trace and the parent\'s span id; a remote parent is said so, with its tracestate', () => {
    const { recorder, records } = recordedBy(new ParentBasedSampler({ root: new AlwaysOnSampler() }))
    const parent = recorder.startSpan('GET api', { kind: api.SpanKind.SERVER })
    const child = recorder.startSpan('backend GET', { kind: api.SpanKind.CLIENT }, api.trace.setSpan(api.ROOT_CONTEXT, parent))
    expect(child.spanContext().traceId).toBe(parent.spanContext().traceId)
    child.end()
    expect(records[0]!.parent).toEqual({ spanId: parent.spanContext().spanId, remote: false })

    const incoming = remoteParent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'vendor=opaque')
    const continued = recorder.startSpan('GET api', { kind: api.SpanKind.SERVER }, incoming)
    expect(continued.spanContext()).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', traceFlags: 1 })
    expect(continued.spanContext().traceState?.serialize()).toBe('vendor=opaque')
    continued.end()
    expect(records[1]).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', parent: { spanId: 'b7ad6b7169203331', remote: true }, traceState: 'vendor=opaque' })
  })

  it('what the sampler refuses is a non-recording span with ids (flag 0) for propagation, and no record', () => {
    for (const sampler of [new AlwaysOffSampler(), new TraceIdRatioBasedSampler(0), new ParentBasedSampler({ root: new AlwaysOnSampler() })]) {
      const { recorder, records } = recordedBy(sampler)
      const context = sampler instanceof ParentBasedSampler ? remoteParent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00') : api.ROOT_CONTEXT
      const span = recorder.startSpan('GET api', { kind: api.SpanKind.SERVER }, context)
      expect(span.isRecording()).toBe(false)
      expect(span.spanContext()).toMatchObject({ traceId: expect.stringMatching(/^[0-9a-f]{32}$/), spanId: expect.stringMatching(/^[0-9a-f]{16}$/), traceFlags: 0 })
      span.setAttribute('x', 1)
      span.end()
      expect(records).toEqual([])
    }
  })

  it('a request\'s span (startRequest) asks the sampler once, on the trace id the span gets; a ratio sampler decides on it as the SDK does', () => {
    const ratio = new TraceIdRatioBasedSampler(0.5)
    const asked: string[] = []
    const sampler: Sampler = { shouldSample: (...args) => (asked.push(args[1]), ratio.shouldSample(...args)) }
    // The first trace id drawn is the test's, any later one another: the span and the answer must both have the first.
    let next: string | undefined
    const ids = { generateTraceId: () => {
      const id = next ?? 'e'.repeat(32)
      next = undefined
      return id
    }, generateSpanId: () => new RequestIds().generateSpanId() } as RequestIds
    const records: SpanRecord[] = []
    const recorder = new SpanRecorder(api, core, sampler, ids, { push: record => records.push(record) }, SamplingDecision.RECORD_AND_SAMPLED, true)
    let sampled = 0
    for (let i = 0; i < 200; i++) {
      const traceId = next = new RequestIds().generateTraceId()
      const expected = ratio.shouldSample(api.ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED
      const span = recorder.startRequest('GET api', api.SpanKind.SERVER, api.ROOT_CONTEXT)
      expect(asked.splice(0)).toEqual([traceId])
      expect(span.spanContext()).toMatchObject({ traceId, spanId: expect.stringMatching(/^[0-9a-f]{16}$/), traceFlags: expected ? 1 : 0 })
      expect(span.isRecording()).toBe(expected)
      // Its backend call's span asks no sampler: sampled with it, or none.
      const child = recorder.startChild(span, 'backend GET', api.SpanKind.CLIENT, { 'url.path': '/ping' })
      expect(asked).toEqual([])
      expect(child?.spanContext()).toEqual(expected ? { traceId, spanId: expect.stringMatching(/^[0-9a-f]{16}$/), traceFlags: 1, traceState: undefined } : undefined)
      child?.end()
      span.end()
      if (expected) sampled++
    }
    expect(sampled).toBeGreaterThan(0)
    expect(sampled).toBeLessThan(200)
    expect(records).toHaveLength(sampled * 2)
  })

  it('a request\'s span (startRequest) asks with its name and kind, and keeps the tracestate and attributes the sampler answers', () => {
    const asked: unknown[][] = []
    const sampler: Sampler = { shouldSample: (...args) => (asked.push(args), { decision: SamplingDecision.RECORD_AND_SAMPLED, traceState: new core.TraceState('rule=7'), attributes: { 'sampler.rule': 7 } }) }
    const { recorder, records } = recordedBy(sampler)
    const span = recorder.startRequest('POST login', api.SpanKind.SERVER, remoteParent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'vendor=a'))
    expect(asked).toEqual([[expect.anything(), '0af7651916cd43dd8448eb211c80319c', 'POST login', api.SpanKind.SERVER, {}, []]])
    expect(span.spanContext().traceState?.serialize()).toBe('rule=7')
    recorder.startChild(span, 'iam login', api.SpanKind.CLIENT, {})!.end()
    span.end()
    expect(records).toEqual([
      expect.objectContaining({ name: 'iam login', traceState: 'rule=7', attributes: {} }),
      expect.objectContaining({ name: 'POST login', kind: api.SpanKind.SERVER, traceState: 'rule=7', parent: { spanId: 'b7ad6b7169203331', remote: true }, attributes: { 'sampler.rule': 7 } }),
    ])
  })

  it('startChild makes no span under a span not recording (not sampled, or ended), nor for a sampler that might not sample the child', () => {
    const { recorder } = recordedBy(new AlwaysOnSampler())
    const parent = recorder.startRequest('GET api', api.SpanKind.SERVER, api.ROOT_CONTEXT)
    expect(recorder.startChild(parent, 'x', api.SpanKind.CLIENT, {})?.isRecording()).toBe(true)
    expect(recorder.startChild(api.trace.wrapSpanContext(parent.spanContext()), 'x', api.SpanKind.CLIENT, {})).toBeUndefined()
    parent.end()
    expect(recorder.startChild(parent, 'x', api.SpanKind.CLIENT, {})).toBeUndefined()
    const cautious = new SpanRecorder(api, core, new AlwaysOnSampler(), new RequestIds(), { push: () => {} }, SamplingDecision.RECORD_AND_SAMPLED, false)
    expect(cautious.startChild(cautious.startSpan('GET api'), 'x', api.SpanKind.CLIENT, {})).toBeUndefined()
  })

  it('events, links, a new name and recordException are kept as the SDK keeps them', () => {
    const { recorder, records } = recordedBy(new AlwaysOnSampler())
    const other = { traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), traceFlags: 1 }
    const span = recorder.startSpan('first', { links: [{ context: other, attributes: { why: 'batch' } }] })
    span.addEvent('retry', { attempt: 2 }, [1_800_000_000, 5])
    span.addEvent('bare', 1_800_000_000_123)
    span.recordException(Object.assign(new TypeError('no route'), { stack: 'TypeError: no route\n    at here' }))
    span.updateName('second')
    span.end([1_800_000_001, 0])
    expect(records[0]).toMatchObject({
      name: 'second',
      end: [1_800_000_001, 0],
      links: [{ traceId: other.traceId, spanId: other.spanId, traceFlags: 1, attributes: { why: 'batch' } }],
      events: [
        { name: 'retry', attributes: { attempt: 2 }, time: [1_800_000_000, 5] },
        { name: 'bare', attributes: {}, time: [1_800_000_000, 123_000_000] },
        { name: 'exception', attributes: { 'exception.type': 'TypeError', 'exception.message': 'no route', 'exception.stacktrace': 'TypeError: no route\n    at here' } },
      ],
    })
  })
})

describe('SpanRecorder: what a span keeps, as the SDK\'s span keeps it', () => {
  it('refuses attribute values the SDK refuses, without losing the value held; copies arrays', () => {
    const { recorder, records } = recordedBy(new AlwaysOnSampler())
    const span = recorder.startSpan('GET api', { attributes: { kept: 'yes', odd: { nested: true } as never } })
    const list = ['a', 'b']
    span.setAttribute('kept', 10n as never).setAttribute('kept', { x: 1 } as never).setAttribute('kept', ['a', 1] as never)
    span.setAttribute('list', list).setAttribute('', 'no key').setAttribute('gone', undefined as never)
    list.push('c')
    span.end()
    expect(records[0]!.attributes).toEqual({ kept: 'yes', list: ['a', 'b'] })
    expect(() => JSON.stringify(records)).not.toThrow()
  })

  it('UNSET never replaces a status, OK is final, and only an ERROR keeps its message', () => {
    const { recorder, records } = recordedBy(new AlwaysOnSampler())
    const statuses = [
      [[{ code: api.SpanStatusCode.ERROR, message: 'down' }, { code: api.SpanStatusCode.UNSET }], { code: 2, message: 'down' }],
      [[{ code: api.SpanStatusCode.OK, message: 'fine' }, { code: api.SpanStatusCode.ERROR, message: 'late' }], { code: 1 }],
      [[{ code: api.SpanStatusCode.ERROR, message: 'first' }, { code: api.SpanStatusCode.OK }], { code: 1 }],
    ] as const
    for (const [sets] of statuses) {
      const span = recorder.startSpan('step')
      for (const status of sets) span.setStatus(status)
      span.end()
    }
    expect(records.map(record => record.status)).toEqual(statuses.map(([, status]) => status))
  })

  it('keeps the SDK\'s clock: the start from Date.now() or the time given, the end as the start plus the monotonic time since', async () => {
    const { recorder, records } = recordedBy(new AlwaysOnSampler())
    const before = Date.now()
    const measured = recorder.startSpan('measured')
    await new Promise(resolve => setTimeout(resolve, 30))
    measured.end()
    const given = recorder.startSpan('given', { startTime: new Date(1_800_000_000_250) })
    given.end(1_800_000_000_999.5)
    const performanceTime = recorder.startSpan('performance time', { startTime: performance.now() })
    performanceTime.end([1, 2])
    const ms = ([seconds, nanos]: api.HrTime) => seconds * 1000 + nanos / 1e6
    const [m, g, p] = records
    expect(ms(m!.start)).toBeGreaterThanOrEqual(before)
    expect(ms(m!.start)).toBeLessThanOrEqual(Date.now())
    expect(ms(m!.end) - ms(m!.start)).toBeGreaterThanOrEqual(29)
    expect(ms(m!.end) - ms(m!.start)).toBeLessThan(1000)
    expect([g!.start, g!.end]).toEqual([[1_800_000_000, 250_000_000], [1_800_000_000, 999_500_000]])
    expect(Math.abs(ms(p!.start) - Date.now())).toBeLessThan(1000)
    expect(p!.end).toEqual([1, 2])
  })

  it('makes no span where tracing is suppressed', () => {
    const { recorder, records } = recordedBy(new AlwaysOnSampler())
    const span = recorder.startSpan('GET api', {}, core.suppressTracing(api.ROOT_CONTEXT))
    expect(span.isRecording()).toBe(false)
    expect(api.isSpanContextValid(span.spanContext())).toBe(false)
    span.end()
    expect(records).toEqual([])
  })
})

/** The OTLP JSON spans a receiver got, with their resource's service name and their scope's name. */
function exported(receiver: OtlpReceiver): Array<Record<string, unknown>> {
  type Body = { resourceSpans: { resource: { attributes: { key: string, value: { stringValue?: string } }[] }, scopeSpans: { scope: { name: string }, spans: Record<string, unknown>[] }[] }[] }
  return receiver.bodies.flatMap(body => (JSON.parse(body.toString('utf8')) as Body).resourceSpans.flatMap(resource =>
    resource.scopeSpans.flatMap(scope => scope.spans.map(span => ({ service: resource.resource.attributes.find(a => a.key === 'service.name')?.value.stringValue, scope: scope.scope.name, ...span })))))
}

/**
 * Ids handed out in order, trace ids and span ids each from a counter of their own, the same for every tracer given
 * one: so that two tracers make the same spans, whichever of a span's two ids they take first.
 */
function fixedIds(): RequestIds {
  const counters = { 16: 0, 32: 0 }
  const next = (length: 16 | 32) => (++counters[length]).toString(16).padStart(length, '0')
  return { generateTraceId: () => next(32), generateSpanId: () => next(16) }
}

/** The same calls on any tracer: a trusted incoming parent, a child with everything a span can carry, some refused. */
function makeSpans(tracer: api.Tracer): void {
  const incoming = remoteParent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'vendor=opaque')
  const server = tracer.startSpan('GET api', { kind: api.SpanKind.SERVER, attributes: { 'http.route': 'api', 'odd': {} as never }, startTime: [1_800_000_000, 1_000] }, incoming)
  const call = tracer.startSpan('backend GET', { kind: api.SpanKind.CLIENT, startTime: [1_800_000_000, 2_000], links: [{ context: { traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), traceFlags: 1, isRemote: true }, attributes: { why: 'batch' } }] }, api.trace.setSpan(api.ROOT_CONTEXT, server))
  call.setAttribute('http.response.status_code', 503).setAttribute('tags', ['a', 'b']).setAttribute('http.response.status_code', 10n as never)
  call.setStatus({ code: api.SpanStatusCode.ERROR, message: 'backend down' }).setStatus({ code: api.SpanStatusCode.UNSET })
  call.addEvent('retry', { attempt: 2 }, [1_800_000_000, 3_000])
  call.recordException(Object.assign(new TypeError('no route'), { stack: 'TypeError: no route' }), [1_800_000_000, 3_500])
  call.updateName('backend GET /ping')
  call.end([1_800_000_000, 4_000])
  server.setStatus({ code: api.SpanStatusCode.OK }).setStatus({ code: api.SpanStatusCode.ERROR })
  server.end([1_800_000_000, 5_000])
  const root = tracer.startSpan('oidc discovery', { kind: api.SpanKind.CLIENT, startTime: [1_800_000_000, 6_000] })
  root.end([1_800_000_000, 7_000])
}

describe('the export thread: the SDK makes the recorded spans again and exports them', () => {
  let receiver: OtlpReceiver
  const saved = { ...process.env }
  beforeAll(async () => {
    receiver = await startOtlpReceiver()
    // The thread reads the OTEL_* variables as the process has them when it starts (and nothing else of it).
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url
    process.env.OTEL_BSP_SCHEDULE_DELAY = '100'
    process.env.OTEL_SERVICE_NAME = 'thread-test'
  })
  afterAll(async () => {
    process.env = saved
    await receiver.close()
  })

  it('exports exactly what the SDK would have on the request thread, byte for byte in OTLP\'s JSON', async () => {
    // The SDK on this thread, as the gateway ran it before the export thread.
    const resource = defaultResource().merge(resourceFromAttributes({ 'service.name': 'svc-auth-gateway' })).merge(detectResources({ detectors: [envDetector] }))
    const direct = new BasicTracerProvider({ resource, idGenerator: fixedIds(), spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] })
    makeSpans(direct.getTracer('svc-auth-gateway'))
    await direct.shutdown()
    const expected = exported(receiver)
    receiver.bodies.length = 0

    const failures: Error[] = []
    const thread = startExportThread('svc-auth-gateway', 'svc-auth-gateway', { failed: error => failures.push(error), dropped: () => {} })
    makeSpans(new SpanRecorder(api, core, new ParentBasedSampler({ root: new AlwaysOnSampler() }), fixedIds(), thread, SamplingDecision.RECORD_AND_SAMPLED, true))
    await thread.shutdown()
    expect(failures).toEqual([])
    const byName = (spans: Array<Record<string, unknown>>) => [...spans].sort((a, b) => String(a.name).localeCompare(String(b.name)))
    expect(expected).toHaveLength(3)
    expect(byName(exported(receiver))).toEqual(byName(expected))
    // And what that is, so that the two cannot agree on nothing.
    const named = (name: string) => expected.find(span => span.name === name)
    expect(named('GET api')).toMatchObject({
      service: 'thread-test',
      scope: 'svc-auth-gateway',
      name: 'GET api',
      traceId: '0af7651916cd43dd8448eb211c80319c',
      parentSpanId: 'b7ad6b7169203331',
      traceState: 'vendor=opaque',
      kind: 2,
      startTimeUnixNano: '1800000000000001000',
      endTimeUnixNano: '1800000000000005000',
      attributes: [{ key: 'http.route', value: { stringValue: 'api' } }],
      status: { code: 1 },
      flags: 0x301,
    })
    expect(named('backend GET /ping')).toMatchObject({
      status: { code: 2, message: 'backend down' },
      attributes: [{ key: 'http.response.status_code', value: { intValue: 503 } }, { key: 'tags', value: { arrayValue: { values: [{ stringValue: 'a' }, { stringValue: 'b' }] } } }],
      events: [{ name: 'retry', timeUnixNano: '1800000000000003000' }, { name: 'exception', timeUnixNano: '1800000000000003500' }],
      links: [{ traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), flags: 0x301 }],
    })
  })

  it('a request\'s spans made the short way (startRequest, startChild) are exported as the SDK\'s startSpan makes them', async () => {
    const incoming = remoteParent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'vendor=opaque')
    const notSampled = remoteParent('00-0af7651916cd43dd8448eb211c80319d-b7ad6b7169203332-00')
    const parents = [api.ROOT_CONTEXT, incoming, notSampled]
    const sampler = () => new ParentBasedSampler({ root: new AlwaysOnSampler() })
    receiver.bodies.length = 0
    const resource = defaultResource().merge(resourceFromAttributes({ 'service.name': 'svc-auth-gateway' })).merge(detectResources({ detectors: [envDetector] }))
    const direct = new BasicTracerProvider({ resource, idGenerator: fixedIds(), sampler: sampler(), spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] })
    const tracer = direct.getTracer('svc-auth-gateway')
    for (const parent of parents) {
      const server = tracer.startSpan('GET api', { kind: api.SpanKind.SERVER }, parent)
      server.setAttributes({ 'http.route': 'api' })
      tracer.startSpan('backend GET', { kind: api.SpanKind.CLIENT, attributes: { 'url.path': '/ping' } }, api.trace.setSpan(api.ROOT_CONTEXT, server)).end()
      server.end()
    }
    await direct.shutdown()
    const expected = exported(receiver)
    receiver.bodies.length = 0

    const thread = startExportThread('svc-auth-gateway', 'svc-auth-gateway', { failed: () => {}, dropped: () => {} })
    const recorder = new SpanRecorder(api, core, sampler(), fixedIds(), thread, SamplingDecision.RECORD_AND_SAMPLED, true)
    const unsampled: api.SpanContext[] = []
    for (const parent of parents) {
      const server = recorder.startRequest('GET api', api.SpanKind.SERVER, parent)
      if (server.isRecording()) server.setAttributes({ 'http.route': 'api' })
      else unsampled.push(server.spanContext())
      recorder.startChild(server, 'backend GET', api.SpanKind.CLIENT, { 'url.path': '/ping' })?.end()
      server.end()
    }
    await thread.shutdown()
    // Times are each tracer's own now: checked as times, then left out of the comparison.
    const timeless = (spans: Array<Record<string, unknown>>) => spans.map(({ startTimeUnixNano, endTimeUnixNano, ...span }) => {
      expect(BigInt(String(endTimeUnixNano))).toBeGreaterThanOrEqual(BigInt(String(startTimeUnixNano)))
      return span
    }).sort((a, b) => String(a.spanId).localeCompare(String(b.spanId)))
    expect(expected).toHaveLength(4)
    expect(timeless(exported(receiver))).toEqual(timeless(expected))
    expect(timeless(expected).map(span => [span.name, span.traceId, span.parentSpanId, span.traceState])).toEqual([
      ['GET api', '1'.padStart(32, '0'), undefined, undefined],
      ['backend GET', '1'.padStart(32, '0'), '1'.padStart(16, '0'), undefined],
      ['GET api', '0af7651916cd43dd8448eb211c80319c', 'b7ad6b7169203331', 'vendor=opaque'],
      ['backend GET', '0af7651916cd43dd8448eb211c80319c', '3'.padStart(16, '0'), 'vendor=opaque'],
    ])
    // The parent not sampled: a span of the gateway's own id on its trace, not sampled, which the backend receives.
    expect(unsampled).toEqual([{ traceId: '0af7651916cd43dd8448eb211c80319d', spanId: '5'.padStart(16, '0'), traceFlags: 0, traceState: undefined }])
  })

  it('a thread that fails is said, its records dropped and counted meanwhile, and it is started again', async () => {
    const failures: Array<[string, number]> = []
    const drops: number[] = []
    let starts = 0
    const makeWorker = () => ++starts === 1
      ? new Worker('throw new Error("the thread failed")', { eval: true })
      : new Worker('const { parentPort } = require("node:worker_threads"); parentPort.on("message", (m) => parentPort.postMessage(m === "shutdown" ? { closed: true } : { took: JSON.parse(m).length }))', { eval: true })
    const thread = new ExportThread(makeWorker, { failed: (error, retryMs) => failures.push([error.message, retryMs]), dropped: dropped => drops.push(dropped) }, 100)
    await expect.poll(() => failures).toEqual([['the thread failed', 100]])
    const recorder = new SpanRecorder(api, core, new AlwaysOnSampler(), new RequestIds(), thread, SamplingDecision.RECORD_AND_SAMPLED, true)
    recorder.startSpan('while away').end()
    expect([thread.dropped, drops]).toEqual([1, [1]])
    await expect.poll(() => starts).toBe(2)
    recorder.startSpan('back').end()
    await thread.shutdown()
    expect(thread.dropped).toBe(1)
  })

  it('a thread that falls behind holds at most 2,048 records; the rest are dropped and counted', async () => {
    // A thread that never answers: every record handed over stays in flight.
    const worker = new Worker('require("node:worker_threads").parentPort.on("message", () => {})', { eval: true })
    const drops: number[] = []
    const thread = new ExportThread(() => worker, { failed: () => {}, dropped: dropped => drops.push(dropped) })
    const recorder = new SpanRecorder(api, core, new AlwaysOnSampler(), new RequestIds(), thread, SamplingDecision.RECORD_AND_SAMPLED, true)
    for (let i = 0; i < 3_000; i++) recorder.startSpan('GET api').end()
    expect(thread.dropped).toBe(3_000 - 2_048)
    expect(drops.at(-1)).toBe(3_000 - 2_048)
    await worker.terminate()
  })
})
