import { Histogram, type Registry } from 'prom-client'

/**
 * What the gateway's series share (ops/metrics.ts, ops/route-metrics.ts): the status classes and latency buckets every
 * label set uses, and histograms over one label of a fixed set, cheap on the request path.
 */

/** Status classes: 'none' is no answer. */
export const STATUS_CLASSES = ['none', '1xx', '2xx', '3xx', '4xx', '5xx'] as const

/** Seconds: from 1 ms to a minute (the proxy's default timeout). */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

/** Index of a status in STATUS_CLASSES: 404 is '4xx'; no status (0: no answer) or an odd one is 'none'. */
export function statusIndex(status: number): number {
  const index = Math.floor(status / 100)
  return index >= 1 && index < STATUS_CLASSES.length ? index : 0
}

/** 404 is '4xx'; no status (0: no answer) is 'none'. */
export function statusClass(status: number): string {
  return STATUS_CLASSES[statusIndex(status)]!
}

/** What observes one latency: the label's value (from a fixed set) and the seconds. */
export interface FixedLabelHistogram {
  observe(labelValue: string, seconds: number): void
  /** Takes one more value into the set (up to the histogram's `maxValues`). */
  extend(labelValue: string): void
}

/** Observations held before they go to prom-client together (see fixedLabelHistogram). */
const OBSERVATION_BATCH = 256

/**
 * A prom-client histogram over one label whose values form a fixed set, each value's child bound once at start. An
 * observation is two stores into typed arrays; they reach prom-client's observe() together, 256 at a time or when the
 * registry collects (a scrape): prom-client's observe() makes a label object and a hash string each time, and called
 * one at a time on the request path it cost the proxy 2.5% of its rate (bench:ab, two builds of this file), in a
 * batch a tight loop. A value outside the set is not counted.
 */
export function fixedLabelHistogram(name: string, help: string, label: string, values: readonly string[], registers: Registry[], maxValues = values.length): FixedLabelHistogram {
  const indexOf = new Map(values.map((value, index) => [value, index]))
  // A value's index in the batch: a byte, unless there may be more values than a byte counts (a routes file's names).
  const labels = maxValues > 256 ? new Uint16Array(OBSERVATION_BATCH) : new Uint8Array(OBSERVATION_BATCH)
  const seconds = new Float64Array(OBSERVATION_BATCH)
  let held = 0
  const flush = () => {
    const count = held
    held = 0
    for (let at = 0; at < count; at++) children[labels[at]!]!.observe(seconds[at]!)
  }
  const histogram = new Histogram({ name, help, labelNames: [label], buckets: LATENCY_BUCKETS, registers, collect: flush })
  const children = values.map(value => histogram.labels(value))
  return {
    observe(labelValue, value) {
      const index = indexOf.get(labelValue)
      // prom-client throws on a value that is not a finite number: never from a request's end.
      if (index === undefined || !Number.isFinite(value)) return
      labels[held] = index
      seconds[held] = value
      if (++held === OBSERVATION_BATCH) flush()
    },
    extend(labelValue) {
      if (indexOf.has(labelValue) || children.length >= maxValues) return
      indexOf.set(labelValue, children.length)
      children.push(histogram.labels(labelValue))
    },
  }
}
