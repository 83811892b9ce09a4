// @ts-check
/**
 * The soak's checks of a trend (pure, as soak/checks.mjs's): memory kept per request, fitted over the run after its
 * warm-up, and how soon latency comes back after Redis does.
 */
import { afterMarkCompacts } from './sampler.mjs'
import { flatnessWindows } from './schedule.mjs'

/**
 * @typedef {import('./load.mjs').Outcome} Outcome
 * @typedef {import('./sampler.mjs').Sample} Sample
 * @typedef {import('./schedule.mjs').FaultWindow} FaultWindow
 * @typedef {import('./checks.mjs').Verdict} Verdict
 */

/** Bytes of V8 heap a request may leave behind, fitted over the run: a 1 KiB-per-request leak is well above. */
export const SLOPE_LIMIT = 400
/** Without enough mark-compacts, the slope is judged on the heap's floor in this many spans of the window. */
const SPANS = 12
/** Mark-compacts in the window needed to fit what the collector kept (else the floors are fitted). */
const MIN_COLLECTIONS = 5

const count = (/** @type {number} */ n) => Math.round(n).toLocaleString('en-US')

/**
 * Least-squares line through points: its slope and the slope's standard error.
 * @param {[number, number][]} points
 */
export function fitLine(points) {
  const n = points.length
  const mean = (/** @type {number} */ i) => points.reduce((sum, p) => sum + p[i], 0) / n
  const [mx, my] = [mean(0), mean(1)]
  let sxx = 0
  let sxy = 0
  for (const [x, y] of points) {
    sxx += (x - mx) ** 2
    sxy += (x - mx) * (y - my)
  }
  const slope = sxy / sxx
  const residuals = points.reduce((sum, [x, y]) => sum + (y - my - slope * (x - mx)) ** 2, 0)
  return { slope, error: n > 2 ? Math.sqrt(residuals / (n - 2) / sxx) : Number.POSITIVE_INFINITY }
}

/**
 * Bytes of V8 heap kept per request, per instance: from the end of the warm-up (and the flatness check's baseline) to
 * the run's end, the heap's floor in each of SPANS spans (its lowest sample: the collector's low point, which a leak
 * lifts and garbage does not) is fitted by least squares against the requests that instance had answered by then.
 * Fails when the slope is above SLOPE_LIMIT by more than twice its standard error: a leak of 1 KiB per request fails
 * a 3-minute run, where growth within the flatness check's 10% band goes unseen; a noisy short run is not failed on noise.
 * @param {Sample[]} samples
 * @param {Outcome[]} outcomes
 * @param {number} runMs
 * @param {number} [warmUpEndMs]
 * @returns {Verdict}
 */
export function checkMemorySlope(samples, outcomes, runMs, warmUpEndMs = 0) {
  const from = flatnessWindows(runMs, warmUpEndMs).baseline[0]
  const parts = []
  const details = []
  let pass = true
  for (const instance of [...new Set(samples.map(s => s.instance))].sort()) {
    const own = samples.filter(s => s.instance === instance && s.t >= from && s.t <= runMs && s.heapMiB !== undefined)
    const pid = own.at(-1)?.pid
    const lived = own.filter(s => s.pid === pid)
    const answered = outcomes.filter(o => o.instance === instance && o.reached).map(o => o.end).sort((a, b) => a - b)
    const by = (/** @type {number} */ t) => {
      let [low, high] = [0, answered.length]
      while (low < high) {
        const middle = (low + high) >> 1
        if (answered[middle] <= t) low = middle + 1
        else high = middle
      }
      return low
    }
    if (lived.length < SPANS) {
      pass = false
      details.push(`${instance}: too few samples after the warm-up (${lived.length})`)
      continue
    }
    // What the collector kept: old space in the first sample after each mark-compact (a sample of the same process).
    const collected = afterMarkCompacts(lived)
    /** @type {[number, number][]} */
    const points = collected.length >= MIN_COLLECTIONS ? collected.map(s => [by(s.t), (s.oldMiB ?? 0) * 2 ** 20]) : []
    if (!points.length) {
      const size = lived.length / SPANS
      for (let span = 0; span < SPANS; span++) {
        const lowest = lived.slice(Math.round(span * size), Math.round((span + 1) * size)).reduce((low, s) => ((s.heapMiB ?? 0) < (low.heapMiB ?? 0) ? s : low))
        points.push([by(lowest.t), (lowest.heapMiB ?? 0) * 2 ** 20])
      }
    }
    const requests = by(lived.at(-1)?.t ?? 0) - by(lived[0]?.t ?? 0)
    const { slope, error } = fitLine(points)
    const over = slope - 2 * error > SLOPE_LIMIT
    if (over) pass = false
    const basis = collected.length >= MIN_COLLECTIONS ? `old space after ${collected.length} mark-compacts` : `heap floors of ${SPANS} spans`
    parts.push(`${instance}: ${count(slope)} ± ${count(error)} B/request over ${count(requests)} requests (${basis})${over ? ' (over)' : ''}`)
  }
  return {
    name: 'memory slope',
    pass: pass && parts.length > 0,
    line: `memory slope: V8 heap kept per request after the warm-up ${pass ? 'within' : 'NOT within'} ${SLOPE_LIMIT} B (least squares, ± its standard error; ${parts.join('; ')})`,
    details,
  }
}

/** Faults after which Redis answers again at the window's end (restarted, or a replica promoted). */
const REDIS_FAULTS = new Set(['redis-restart', 'redis-empty', 'redis-failover'])
/** The exchanges whose p99 must come back: logins, session reads, proxied GETs. */
const RECOVERING = ['login', 'session', 'get']
/**
 * Back means: p99 over a window of WINDOW_MS within RATIO of the level before the fault, or FLOOR_MS above it
 * (whichever is more: a 2-core machine's noise is tens of ms whatever the level), starting at most WITHIN_MS after
 * Redis answers. The level before is taken over up to BASELINE_MS before the fault, after any earlier fault.
 */
export const RECOVERY = { withinMs: 5_000, ratio: 1.2, floorMs: 100, windowMs: 3_000, stepMs: 250, baselineMs: 20_000, slackMs: 2_000, minCount: 5 }

const median = (/** @type {number[]} */ values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const p99 = (/** @type {number[]} */ values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(0.99 * sorted.length))]
}

/**
 * After each Redis fault (a crash and restart, a failover), how long p99 of logins, session reads and proxied GETs took
 * to come back within RECOVERY's bounds of its level before the fault (the median p99 of the windows before it): the
 * first window of RECOVERY.windowMs, starting at Redis's return or in steps after it, where each exchange's p99 (of
 * those that started in it) is back. Fails when
 * that start is more than RECOVERY.withinMs after Redis answered. A window that would reach into the next fault is not
 * taken: a fault with no room after it is said as not judged.
 * @param {Outcome[]} outcomes
 * @param {FaultWindow[]} windows
 * @returns {Verdict}
 */
export function checkLatencyRecovery(outcomes, windows) {
  const timed = outcomes.filter(o => RECOVERING.includes(o.op) && !o.warmUp && o.status !== undefined)
  const latencies = (/** @type {string} */ op, /** @type {number} */ from, /** @type {number} */ to) => timed.filter(o => o.op === op && o.start >= from && o.start < to).map(o => o.end - o.start)
  const parts = []
  const details = []
  let pass = true
  const sorted = [...windows].sort((a, b) => a.start - b.start)
  for (const [i, fault] of sorted.entries()) {
    if (!REDIS_FAULTS.has(fault.kind)) continue
    const before = Math.max(fault.start - RECOVERY.baselineMs, (sorted[i - 1]?.end ?? 0) + RECOVERY.slackMs)
    const next = (sorted[i + 1]?.start ?? Number.POSITIVE_INFINITY) - RECOVERY.slackMs
    const limits = new Map(RECOVERING.map((op) => {
      // The level before: the median of the same windows' p99 (a loaded machine's spikes are in it as they will be after).
      const levels = []
      for (let at = before; at + RECOVERY.windowMs <= fault.start; at += RECOVERY.stepMs) {
        const window = latencies(op, at, at + RECOVERY.windowMs)
        if (window.length >= RECOVERY.minCount) levels.push(p99(window))
      }
      const whole = latencies(op, before, fault.start)
      const base = levels.length ? median(levels) : whole.length >= RECOVERY.minCount ? p99(whole) : undefined
      return [op, base === undefined ? undefined : { base, limit: Math.max(base * RECOVERY.ratio, base + RECOVERY.floorMs) }]
    }))
    /** @type {{ at: number, shown: string } | undefined} */
    let back
    let last = ''
    for (let at = fault.end; at + RECOVERY.windowMs <= next && at <= fault.end + 6 * RECOVERY.withinMs; at += RECOVERY.stepMs) {
      const shown = []
      let ok = true
      for (const op of RECOVERING) {
        const bound = limits.get(op)
        const now = latencies(op, at, at + RECOVERY.windowMs)
        if (!bound || now.length < RECOVERY.minCount) continue
        const level = p99(now)
        if (level > bound.limit) ok = false
        shown.push(`${op} ${count(bound.base)}→${count(level)} ms`)
      }
      last = shown.join(', ')
      if (ok && shown.length) {
        back = { at, shown: last }
        break
      }
    }
    const label = `${fault.kind} at ${(fault.start / 1000).toFixed(0)} s`
    // Not back in a shorter room than the 5 s and a window: the next fault came before it could be told.
    if (!last || (!back && fault.end + RECOVERY.withinMs + RECOVERY.windowMs > next)) {
      parts.push(`${label}: not judged (no room before the next fault, or too few exchanges)`)
      continue
    }
    const took = back ? back.at - fault.end : undefined
    const late = took === undefined || took > RECOVERY.withinMs
    if (late) {
      pass = false
      details.push(`${label}: p99 not back within ${RECOVERY.withinMs / 1000} s of Redis answering at ${(fault.end / 1000).toFixed(1)} s (last window: ${last})`)
    }
    parts.push(`${label}: back ${took === undefined ? 'NOT within the run' : `${(took / 1000).toFixed(2)} s`} after Redis answered${late ? ' (late)' : ''} (p99 before→after: ${back?.shown ?? last})`)
  }
  return {
    name: 'latency recovery',
    pass,
    line: `latency recovery: p99 of logins, session reads and proxied GETs ${pass ? 'back' : 'NOT back'} within ${RECOVERY.ratio * 100 - 100}% (or ${RECOVERY.floorMs} ms) of its level before each Redis fault within ${RECOVERY.withinMs / 1000} s of Redis answering (${parts.join('; ') || 'no Redis fault in the run'})`,
    details,
  }
}
