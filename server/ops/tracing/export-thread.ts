/**
 * The export thread: a worker thread where OpenTelemetry's SDK makes the spans the request thread recorded
 * (recorder.ts), with their ids, times and tracestate, and its batch span processor and OTLP/HTTP exporter send them.
 * The SDK reads its settings there from the OTEL_* variables, which are all of the environment the thread gets:
 * OTEL_BSP_*, OTEL_EXPORTER_OTLP_*, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_SPAN_*_LIMIT.
 * The request thread hands ended records over as JSON, in batches (every BATCH records or HANDOVER_MS); at most
 * MAX_IN_FLIGHT wait for the thread at once, beyond which records are dropped and counted, as the SDK's own queue
 * drops spans past OTEL_BSP_MAX_QUEUE_SIZE. A thread that stops is started again, after 1 s, then twice as long each
 * time up to 5 minutes; the records made meanwhile are dropped.
 */
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import { EXPORT_THREAD_PACKAGES } from '../../core/ops/tracing'
import type { RecordSink, SpanRecord } from './recorder'

const BATCH = 256
const HANDOVER_MS = 200
const MAX_IN_FLIGHT = 2048
const FIRST_RESTART_MS = 1000
const MAX_RESTART_MS = 5 * 60_000

/**
 * The thread's script (CommonJS, as Node runs an eval'd worker), kept as plain text so that no build step can change
 * it: `workerData` names the packages by file path (resolved from the server's files by the request thread), the
 * service's default name and the instrumentation scope. Each record becomes one SDK span: the id generator and the
 * sampler hand the SDK the record's own ids and tracestate, the parent's context its span id and whether it is
 * remote. A record the SDK refuses is dropped alone. `'shutdown'` flushes and ends the SDK, then says `closed`.
 */
const SCRIPT = `'use strict'
const { workerData, parentPort } = require('node:worker_threads')
const { packages, serviceName, scopeName } = workerData
const api = require(packages.api)
const core = require(packages.core)
const resources = require(packages.resources)
const sdk = require(packages.sdk)
const { OTLPTraceExporter } = require(packages.exporter)
const resource = resources.defaultResource()
  .merge(resources.resourceFromAttributes({ 'service.name': serviceName }))
  .merge(resources.detectResources({ detectors: [resources.envDetector] }))
let next
const traceState = text => text === undefined ? undefined : new core.TraceState(text)
const provider = new sdk.BasicTracerProvider({
  resource,
  idGenerator: { generateTraceId: () => next.traceId, generateSpanId: () => next.spanId },
  sampler: { shouldSample: () => ({ decision: sdk.SamplingDecision.RECORD_AND_SAMPLED, traceState: traceState(next.traceState) }), toString: () => 'recorded' },
  spanProcessors: [new sdk.BatchSpanProcessor(new OTLPTraceExporter())],
})
const tracer = provider.getTracer(scopeName)
function replay(record) {
  next = record
  const parent = record.parent
    ? api.trace.setSpanContext(api.ROOT_CONTEXT, { traceId: record.traceId, spanId: record.parent.spanId, traceFlags: 1, isRemote: record.parent.remote })
    : api.ROOT_CONTEXT
  const links = record.links && record.links.map(link => ({ context: { traceId: link.traceId, spanId: link.spanId, traceFlags: link.traceFlags, isRemote: link.remote, traceState: traceState(link.traceState) }, attributes: link.attributes }))
  const span = tracer.startSpan(record.name, { kind: record.kind, attributes: record.attributes, links, startTime: record.start }, parent)
  for (const event of record.events || []) span.addEvent(event.name, event.attributes, event.time)
  if (record.status) span.setStatus(record.status)
  span.end(record.end)
}
parentPort.on('message', (message) => {
  if (message === 'shutdown') {
    provider.shutdown().catch(() => undefined).then(() => parentPort.postMessage({ closed: true }))
    return
  }
  const records = JSON.parse(message)
  for (const record of records) {
    try {
      replay(record)
    }
    catch {}
  }
  parentPort.postMessage({ took: records.length })
})
`

/** What the thread says back: how many records it took in, or that its SDK has shut down. */
type ThreadMessage = { took: number } | { closed: true }

/** What the request thread is told of the export thread. */
export interface ExportThreadEvents {
  /** The thread stopped (`error`), and is started again in `retryMs`. */
  failed: (error: Error, retryMs: number) => void
  /** A record was dropped (the thread far behind, or away); `dropped` counts them since the start. */
  dropped: (dropped: number) => void
}

/**
 * Starts the export thread (see the top of this file). Fails at once when a package cannot be found from the
 * server's files.
 */
export function startExportThread(serviceName: string, scopeName: string, events: ExportThreadEvents): ExportThread {
  const require = createRequire(import.meta.url)
  const packages = Object.fromEntries(Object.entries(EXPORT_THREAD_PACKAGES).map(([key, name]) => [key, require.resolve(name)]))
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('OTEL_')))
  return new ExportThread(() => new Worker(SCRIPT, { eval: true, workerData: { packages, serviceName, scopeName }, env, name: 'svc-gateway-traces' }), events)
}

/** The request thread's side of the export thread: the sink the recorder's ended spans go to. */
export class ExportThread implements RecordSink {
  private worker: Worker | undefined
  private pending: SpanRecord[] = []
  private timer: NodeJS.Timeout | undefined
  private restartTimer: NodeJS.Timeout | undefined
  private restartMs: number
  private inFlight = 0
  private stopping = false
  private closed: (() => void) | undefined
  /** Records dropped since the start: the thread MAX_IN_FLIGHT behind, or away. */
  dropped = 0

  constructor(private readonly makeWorker: () => Worker, private readonly events: ExportThreadEvents, private readonly firstRestartMs = FIRST_RESTART_MS) {
    this.restartMs = firstRestartMs
    this.run()
  }

  private run(): void {
    const worker = this.makeWorker()
    worker.unref()
    this.worker = worker
    this.inFlight = 0
    worker.on('message', (message: ThreadMessage) => {
      if (this.worker !== worker) return // a thread already replaced: its counts are not the new one's
      if (!('took' in message)) return this.closed?.()
      this.inFlight -= message.took
      this.restartMs = this.firstRestartMs // it works: a later failure starts the wait again from the first step
    })
    worker.on('error', error => this.lost(worker, error))
    worker.on('exit', code => this.lost(worker, new Error(`the export thread exited (code ${code})`)))
  }

  /** The thread is gone (an error, then its exit: the first counts): started again after a wait, unless stopping. */
  private lost(worker: Worker, error: Error): void {
    if (this.worker !== worker) return
    this.worker = undefined
    this.closed?.()
    if (this.stopping) return
    // What it had not taken in yet is lost with it.
    const lost = this.inFlight
    this.inFlight = 0
    if (lost > 0) this.drop(lost)
    this.events.failed(error, this.restartMs)
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined
      this.run()
    }, this.restartMs).unref()
    this.restartMs = Math.min(this.restartMs * 2, MAX_RESTART_MS)
  }

  push(record: SpanRecord): void {
    if (!this.worker || this.inFlight + this.pending.length >= MAX_IN_FLIGHT) return this.drop(1)
    this.pending.push(record)
    if (this.pending.length >= BATCH) this.handOver()
    else this.timer ??= setTimeout(() => this.handOver(), HANDOVER_MS).unref()
  }

  private drop(count: number): void {
    this.dropped += count
    this.events.dropped(this.dropped)
  }

  /** Gives the pending records to the thread: as JSON text, cheaper here than the structured clone of the objects. */
  private handOver(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    const records = this.pending
    this.pending = []
    if (records.length === 0) return
    if (!this.worker) return this.drop(records.length)
    let text: string
    try {
      text = JSON.stringify(records)
    }
    catch {
      // Records hold checked attribute values only (recorder.ts); a batch that still cannot be written is dropped.
      return this.drop(records.length)
    }
    this.inFlight += records.length
    this.worker.postMessage(text)
  }

  /** Hands over what is pending, lets the SDK send what it holds, and ends the thread. */
  async shutdown(): Promise<void> {
    this.handOver()
    this.stopping = true
    clearTimeout(this.restartTimer)
    const worker = this.worker
    if (!worker) return
    const closed = new Promise<void>((resolve) => {
      this.closed = resolve
    })
    worker.postMessage('shutdown')
    await closed
    await worker.terminate()
  }
}
