/**
 * The export thread: a worker thread where OpenTelemetry's SDK makes the spans the main thread recorded
 * (recorder.ts), with their ids and times, and its batch span processor and OTLP/HTTP exporter send them. The SDK reads
 * its settings there as it would in the main thread (the worker gets the process's environment): OTEL_BSP_*,
 * OTEL_EXPORTER_OTLP_*, OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
 * The main thread hands ended records over in batches (every BATCH records or HANDOVER_MS); at most MAX_IN_FLIGHT
 * wait for the thread at once, beyond which records are dropped and counted (as the SDK's own queue drops spans).
 */
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import { EXPORT_THREAD_PACKAGES } from '../../core/ops/tracing'
import type { RecordSink, SpanRecord } from './recorder'

const BATCH = 256
const HANDOVER_MS = 200
const MAX_IN_FLIGHT = 8192

/** The packages the thread loads (EXPORT_THREAD_PACKAGES), resolved here from the server's files, as file paths. */
type Packages = Record<keyof typeof EXPORT_THREAD_PACKAGES, string>

/** What the thread starts from. */
interface ThreadData {
  packages: Packages
  serviceName: string
  scopeName: string
}

/** What the thread says back: how many records it took in, or that its SDK has shut down. */
type ThreadMessage = { took: number } | { closed: true }

/**
 * The thread's own code, run there as it is written here (its source is the worker's script): it uses nothing from
 * this module, only what it is given.
 */
function exportThreadMain(load: (path: string) => unknown, data: ThreadData, port: import('node:worker_threads').MessagePort): void {
  const api = load(data.packages.api) as typeof import('@opentelemetry/api')
  const core = load(data.packages.core) as typeof import('@opentelemetry/core')
  const resources = load(data.packages.resources) as typeof import('@opentelemetry/resources')
  const sdk = load(data.packages.sdk) as typeof import('@opentelemetry/sdk-trace-base')
  const { OTLPTraceExporter } = load(data.packages.exporter) as typeof import('@opentelemetry/exporter-trace-otlp-http')
  const resource = resources.defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': data.serviceName }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }))
  // The SDK takes the ids from here: each replayed span gets the ones it was recorded with.
  let next: SpanRecord | undefined
  const ids = { generateTraceId: () => next!.traceId, generateSpanId: () => next!.spanId }
  const provider = new sdk.BasicTracerProvider({ resource, sampler: new sdk.AlwaysOnSampler(), idGenerator: ids, spanProcessors: [new sdk.BatchSpanProcessor(new OTLPTraceExporter())] })
  const tracer = provider.getTracer(data.scopeName)
  const traceState = (text: string | undefined) => text === undefined ? undefined : new core.TraceState(text)
  const replay = (record: SpanRecord) => {
    next = record
    const parent = record.parent
      ? api.trace.setSpanContext(api.ROOT_CONTEXT, { traceId: record.traceId, spanId: record.parent.spanId, traceFlags: 1, isRemote: record.parent.remote, traceState: traceState(record.traceState) })
      : api.ROOT_CONTEXT
    const links = record.links?.map(link => ({ context: { traceId: link.traceId, spanId: link.spanId, traceFlags: link.traceFlags, traceState: traceState(link.traceState) }, attributes: link.attributes }))
    const span = tracer.startSpan(record.name, { kind: record.kind, attributes: record.attributes, links, startTime: record.start }, parent)
    for (const event of record.events ?? []) span.addEvent(event.name, event.attributes, event.time)
    if (record.status) span.setStatus(record.status)
    span.end(record.end)
  }
  port.on('message', (message: string) => {
    if (message === 'shutdown') {
      provider.shutdown().catch(() => undefined).then(() => port.postMessage({ closed: true }))
      return
    }
    const records = JSON.parse(message) as SpanRecord[]
    for (const record of records) {
      try {
        replay(record)
      }
      catch {
        // A record the SDK refuses is dropped alone; the others still go out.
      }
    }
    port.postMessage({ took: records.length })
  })
}

/** The script the worker runs: the function above, called with Node's require and what the main thread gives it. */
const SCRIPT = `const { workerData, parentPort } = require('node:worker_threads');\n(${exportThreadMain.toString()})(require, workerData, parentPort);`

/**
 * Starts the export thread (see the top of this file). Fails when a package cannot be found from the server's
 * files; a thread that dies later (it should not) loses the spans from then on, never the process.
 */
export function startExportThread(serviceName: string, scopeName: string, onError: (error: Error) => void): ExportThread {
  const require = createRequire(import.meta.url)
  const packages = Object.fromEntries(Object.entries(EXPORT_THREAD_PACKAGES).map(([key, name]) => [key, require.resolve(name)])) as Packages
  const worker = new Worker(SCRIPT, { eval: true, workerData: { packages, serviceName, scopeName } satisfies ThreadData, name: 'svc-gateway-traces' })
  return new ExportThread(worker, onError)
}

/** The main thread's side of the export thread: the sink the recorder's ended spans go to. */
export class ExportThread implements RecordSink {
  private pending: SpanRecord[] = []
  private timer: NodeJS.Timeout | undefined
  private inFlight = 0
  private dead = false
  private closed: (() => void) | undefined
  /** Records dropped because the thread was MAX_IN_FLIGHT behind, or gone. */
  dropped = 0

  constructor(private readonly worker: Worker, onError: (error: Error) => void) {
    worker.unref()
    worker.on('message', (message: ThreadMessage) => {
      if ('took' in message) this.inFlight -= message.took
      else this.closed?.()
    })
    worker.on('error', (error) => {
      this.dead = true
      onError(error)
    })
    worker.on('exit', () => {
      this.dead = true
      this.closed?.()
    })
  }

  push(record: SpanRecord): void {
    if (this.dead || this.inFlight + this.pending.length >= MAX_IN_FLIGHT) {
      this.dropped++
      return
    }
    this.pending.push(record)
    if (this.pending.length >= BATCH) this.handOver()
    else this.timer ??= setTimeout(() => this.handOver(), HANDOVER_MS).unref()
  }

  /** Gives the pending records to the thread. */
  private handOver(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.pending.length === 0 || this.dead) return
    this.inFlight += this.pending.length
    // As JSON text: V8's JSON is cheaper for these plain records than the structured clone of the objects.
    this.worker.postMessage(JSON.stringify(this.pending))
    this.pending = []
  }

  /** Hands over what is pending, lets the SDK send what it holds, and ends the thread. */
  async shutdown(): Promise<void> {
    this.handOver()
    if (!this.dead) {
      const closed = new Promise<void>((resolve) => {
        this.closed = resolve
      })
      this.worker.postMessage('shutdown')
      await closed
    }
    await this.worker.terminate()
  }
}
