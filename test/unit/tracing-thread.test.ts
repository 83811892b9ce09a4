import * as api from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, SamplingDecision, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace-base'
import { Worker } from 'node:worker_threads'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ExportThread, startExportThread } from '../../server/ops/tracing/export-thread'
import { RequestIds } from '../../server/ops/tracing/ids'
import { SpanRecorder, toHrTime, type SpanRecord } from '../../server/ops/tracing/recorder'
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver'

const recordedBy = (sampler: Sampler) => {
  const records: SpanRecord[] = []
  const recorder = new SpanRecorder(api, sampler, new RequestIds(), { push: record => records.push(record) }, SamplingDecision.RECORD_AND_SAMPLED)
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
      status: { code: api.SpanStatusCode.ERROR, message: undefined },
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

  it('the trace id chosen ahead (ids.withTraceId) is the root span\'s; a ratio sampler decides on it as the SDK does', () => {
    const ids = new RequestIds()
    const records: SpanRecord[] = []
    const sampler = new TraceIdRatioBasedSampler(0.5)
    const recorder = new SpanRecorder(api, sampler, ids, { push: record => records.push(record) }, SamplingDecision.RECORD_AND_SAMPLED)
    let sampled = 0
    for (let i = 0; i < 200; i++) {
      const traceId = (i.toString(16).padStart(8, '0')).repeat(4)
      const expected = sampler.shouldSample(api.ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED
      const span = ids.withTraceId(traceId, () => recorder.startSpan('GET api'))
      expect(span.spanContext().traceId).toBe(traceId)
      expect(span.isRecording()).toBe(expected)
      if (expected) sampled++
    }
    expect(sampled).toBeGreaterThan(0)
    expect(sampled).toBeLessThan(200)
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
        { name: 'bare', attributes: undefined, time: [1_800_000_000, 123_000_000] },
        { name: 'exception', attributes: { 'exception.type': 'TypeError', 'exception.message': 'no route', 'exception.stacktrace': 'TypeError: no route\n    at here' } },
      ],
    })
  })
})

describe('toHrTime: a time as the SDK reads it', () => {
  it.each([
    [[12, 34] as [number, number], [12, 34]],
    [new Date(1_800_000_000_250), [1_800_000_000, 250_000_000]],
    [1_800_000_000_999.5, [1_800_000_000, 999_500_000]],
    [1_800_000_000_001.5, [1_800_000_000, 1_500_000]],
  ])('%j', (time, hr) => {
    expect(toHrTime(time)).toEqual(hr)
  })

  it('a number below the time origin is a performance.now() reading', () => {
    const [seconds] = toHrTime(performance.now())
    expect(Math.abs(seconds - Date.now() / 1000)).toBeLessThan(5)
  })
})

describe('the export thread: the SDK makes the recorded spans again and exports them', () => {
  let receiver: OtlpReceiver
  const saved = { ...process.env }
  beforeAll(async () => {
    receiver = await startOtlpReceiver()
    // The thread reads the OTEL_* variables as the process has them when it starts.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url
    process.env.OTEL_BSP_SCHEDULE_DELAY = '100'
    process.env.OTEL_SERVICE_NAME = 'thread-test'
  })
  afterAll(async () => {
    process.env = saved
    await receiver.close()
  })

  it('with the ids, parent, times, attributes, status, events and links each record had', async () => {
    const errors: Error[] = []
    const thread = startExportThread('svc-auth-gateway', 'svc-auth-gateway', error => errors.push(error))
    const recorder = new SpanRecorder(api, new ParentBasedSampler({ root: new AlwaysOnSampler() }), new RequestIds(), thread, SamplingDecision.RECORD_AND_SAMPLED)
    const incoming = remoteParent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'vendor=opaque')
    const server = recorder.startSpan('GET api', { kind: api.SpanKind.SERVER, attributes: { 'http.route': 'api' }, startTime: [1_800_000_000, 1_000] }, incoming)
    const call = recorder.startSpan('backend GET', { kind: api.SpanKind.CLIENT, startTime: [1_800_000_000, 2_000] }, api.trace.setSpan(api.ROOT_CONTEXT, server))
    call.setAttribute('http.response.status_code', 503).setStatus({ code: api.SpanStatusCode.ERROR, message: 'backend down' })
    call.addEvent('retry', { attempt: 2 }, [1_800_000_000, 3_000])
    call.addLink({ context: { traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), traceFlags: 1 } })
    call.end([1_800_000_000, 4_000])
    server.end([1_800_000_000, 5_000])
    await thread.shutdown()
    expect(errors).toEqual([])

    const spans = receiver.bodies.flatMap(body => JSON.parse(body.toString('utf8')).resourceSpans.flatMap((resource: { resource: { attributes: { key: string, value: { stringValue?: string } }[] }, scopeSpans: { scope: { name: string }, spans: object[] }[] }) =>
      resource.scopeSpans.flatMap(scope => scope.spans.map(span => ({ service: resource.resource.attributes.find(a => a.key === 'service.name')?.value.stringValue, scope: scope.scope.name, ...span })))))
    expect(spans).toHaveLength(2)
    const byName = Object.fromEntries(spans.map(span => [(span as { name: string }).name, span]))
    expect(byName['GET api']).toMatchObject({
      service: 'thread-test',
      scope: 'svc-auth-gateway',
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: server.spanContext().spanId,
      parentSpanId: 'b7ad6b7169203331',
      traceState: 'vendor=opaque',
      kind: 2,
      startTimeUnixNano: '1800000000000001000',
      endTimeUnixNano: '1800000000000005000',
      attributes: [{ key: 'http.route', value: { stringValue: 'api' } }],
      flags: 0x301, // sampled, and its parent is remote
    })
    expect(byName['backend GET']).toMatchObject({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: call.spanContext().spanId,
      parentSpanId: server.spanContext().spanId,
      kind: 3,
      startTimeUnixNano: '1800000000000002000',
      endTimeUnixNano: '1800000000000004000',
      attributes: [{ key: 'http.response.status_code', value: { intValue: 503 } }],
      status: { code: 2, message: 'backend down' },
      events: [{ name: 'retry', timeUnixNano: '1800000000000003000', attributes: [{ key: 'attempt', value: { intValue: 2 } }] }],
      links: [{ traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8) }],
      flags: 0x101,
    })
  })

  it('a thread that fails is said once; records are then dropped and counted, and shutdown still ends', async () => {
    const errors: Error[] = []
    const thread = new ExportThread(new Worker('throw new Error("the thread failed")', { eval: true }), error => errors.push(error))
    await expect.poll(() => errors.map(error => error.message)).toEqual(['the thread failed'])
    const recorder = new SpanRecorder(api, new AlwaysOnSampler(), new RequestIds(), thread, SamplingDecision.RECORD_AND_SAMPLED)
    recorder.startSpan('GET api').end()
    expect(thread.dropped).toBe(1)
    await thread.shutdown()
  })

  it('a thread that falls behind holds at most 8,192 records; the rest are dropped and counted', async () => {
    // A thread that never answers: every record handed over stays in flight.
    const worker = new Worker('require("node:worker_threads").parentPort.on("message", () => {})', { eval: true })
    const thread = new ExportThread(worker, () => {})
    const recorder = new SpanRecorder(api, new AlwaysOnSampler(), new RequestIds(), thread, SamplingDecision.RECORD_AND_SAMPLED)
    for (let i = 0; i < 9_000; i++) recorder.startSpan('GET api').end()
    expect(thread.dropped).toBe(9_000 - 8_192)
    await worker.terminate()
  })
})
