// @ts-check
/**
 * The soak's report: `summary.md` (one line per check, PASS or FAIL first, then the faults, the load and what a
 * failed check found) and `soak.svg`, drawn by Apache ECharts' server-side SVG renderer: throughput, p50/p99
 * latency, RSS (and heap) and open descriptors over time, the fault windows shaded on each.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import * as echarts from 'echarts'
import { FAULTS } from './schedule.mjs'

/**
 * @typedef {import('./checks.mjs').Verdict} Verdict
 * @typedef {import('./load.mjs').Outcome} Outcome
 * @typedef {import('./sampler.mjs').Sample} Sample
 * @typedef {import('./schedule.mjs').FaultWindow & { note?: string }} Window
 */

/** Exchanges whose time is a latency (a stream's or a tunnel's is its length). */
const SHORT = new Set(['login', 'session', 'get', 'logout'])
const INSTANCE_COLOURS = ['#1f77b4', '#d62728', '#2ca02c']

const percentile = (/** @type {number[]} */ sorted, /** @type {number} */ p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]

/**
 * Throughput and latency per bucket of `bucketMs` (by each exchange's end).
 * @param {Outcome[]} outcomes
 * @param {number} runMs
 * @param {number} bucketMs
 */
export function timeline(outcomes, runMs, bucketMs) {
  const buckets = Array.from({ length: Math.ceil(runMs / bucketMs) }, () => ({ done: 0, latencies: /** @type {number[]} */ ([]) }))
  for (const o of outcomes) {
    const bucket = buckets[Math.floor(o.end / bucketMs)]
    if (!bucket || o.op === 'tunnel' || o.warmUp) continue
    bucket.done++
    if (SHORT.has(o.op) && o.status !== undefined) bucket.latencies.push(o.end - o.start)
  }
  return buckets.map((bucket, i) => {
    const sorted = bucket.latencies.sort((a, b) => a - b)
    return { minute: ((i + 0.5) * bucketMs) / 60_000, rate: bucket.done / (bucketMs / 1000), p50: sorted.length ? percentile(sorted, 0.5) : null, p99: sorted.length ? percentile(sorted, 0.99) : null }
  })
}

/**
 * The plot's ECharts option: four panels on one time axis (minutes), fault windows shaded, the warm-up's burst in grey.
 * @param {{ outcomes: Outcome[], samples: Sample[], windows: Window[], runMs: number, warmUp: { from: number, to: number } }} run
 */
function chartOption({ outcomes, samples, windows, runMs, warmUp }) {
  const points = timeline(outcomes, runMs, Math.max(1000, Math.round(runMs / 120 / 1000) * 1000))
  const instances = [...new Set(samples.map(s => s.instance))].sort()
  const panels = ['exchanges / s', 'latency (ms, login, session, GET, logout)', 'memory (MiB; dashed: V8 heap used)', 'open descriptors']
  const top = [6, 29, 52, 75]
  const shade = (/** @type {boolean} */ labelled) => ({
    silent: true,
    itemStyle: { color: 'rgba(255, 152, 0, 0.13)' },
    label: { show: labelled, position: 'insideTop', fontSize: 9, color: '#8a5300', rotate: 90, align: 'right', verticalAlign: 'middle', distance: 2 },
    data: [
      [{ xAxis: warmUp.from / 60_000, name: 'warm-up burst (left out of exchanges / s)', itemStyle: { color: 'rgba(120, 120, 120, 0.15)' } }, { xAxis: warmUp.to / 60_000 }],
      ...windows.map(w => [{ xAxis: w.start / 60_000, name: FAULTS[w.kind].label }, { xAxis: w.end / 60_000 }]),
    ],
  })
  const byInstance = (/** @type {(s: Sample) => number | undefined} */ value) => instances.map(instance => samples
    .filter(s => s.instance === instance)
    .map((s, i, own) => [s.t / 60_000, i > 0 && own[i - 1].pid !== s.pid ? null : value(s) ?? null]))
  /** @type {object[]} */
  const series = [
    { name: 'exchanges / s', type: 'line', xAxisIndex: 0, yAxisIndex: 0, showSymbol: false, data: points.map(p => [p.minute, p.rate]), markArea: shade(true) },
    { name: 'p50', type: 'line', xAxisIndex: 1, yAxisIndex: 1, showSymbol: false, data: points.map(p => [p.minute, p.p50]), markArea: shade(false) },
    { name: 'p99', type: 'line', xAxisIndex: 1, yAxisIndex: 1, showSymbol: false, data: points.map(p => [p.minute, p.p99]) },
  ]
  const rss = byInstance(s => s.rssMiB)
  const heap = byInstance(s => s.heapMiB)
  const fds = byInstance(s => s.fds)
  instances.forEach((instance, i) => {
    const colour = INSTANCE_COLOURS[i % INSTANCE_COLOURS.length]
    series.push(
      { name: `RSS ${instance}`, type: 'line', xAxisIndex: 2, yAxisIndex: 2, showSymbol: false, connectNulls: false, color: colour, data: rss[i], ...(i === 0 ? { markArea: shade(false) } : {}) },
      { name: `heap ${instance}`, type: 'line', xAxisIndex: 2, yAxisIndex: 2, showSymbol: false, connectNulls: false, color: colour, lineStyle: { type: 'dashed', width: 1 }, data: heap[i] },
      { name: `fds ${instance}`, type: 'line', xAxisIndex: 3, yAxisIndex: 3, showSymbol: false, connectNulls: false, color: colour, data: fds[i], ...(i === 0 ? { markArea: shade(false) } : {}) },
    )
  })
  const minutes = runMs / 60_000
  return {
    animation: false,
    backgroundColor: '#fff',
    title: { text: `svc-auth-gateway soak: ${minutes.toFixed(minutes < 10 ? 1 : 0)} min, ${instances.length} instances, faults shaded`, left: 'center', top: 4, textStyle: { fontSize: 14 } },
    legend: { top: 30, data: ['exchanges / s', 'p50', 'p99', ...instances.flatMap(instance => [`RSS ${instance}`, `heap ${instance}`, `fds ${instance}`])] },
    grid: top.map(t => ({ left: 70, right: 30, top: `${t + 4}%`, height: '16%' })),
    xAxis: top.map((_, i) => ({ type: 'value', gridIndex: i, min: 0, max: minutes, name: i === 3 ? 'minutes' : '', nameLocation: 'middle', nameGap: 25 })),
    yAxis: panels.map((name, i) => ({ type: 'value', gridIndex: i, name, nameTextStyle: { align: 'left' }, scale: i >= 2 })),
    series,
  }
}

/**
 * Writes summary.md and soak.svg into `out`.
 * @param {string} out
 * @param {{ verdicts: Verdict[], outcomes: Outcome[], samples: Sample[], windows: Window[], runMs: number, warmUp: { from: number, to: number }, setup: string[] }} run
 */
export function writeReport(out, run) {
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width: 1400, height: 1100 })
  chart.setOption(chartOption(run))
  writeFileSync(join(out, 'soak.svg'), chart.renderToSVGString())
  chart.dispose()

  const ops = new Map()
  for (const o of run.outcomes) ops.set(o.op, (ops.get(o.op) ?? 0) + 1)
  const lines = [
    `# Soak run: ${(run.runMs / 60_000).toFixed(1)} minutes`,
    '',
    ...run.verdicts.map(v => `${v.pass ? 'PASS' : 'FAIL'} ${v.line}`),
    '',
    '## Set-up',
    '',
    ...run.setup.map(line => `- ${line}`),
    `- exchanges: ${[...ops].map(([op, n]) => `${op} ${n.toLocaleString('en-US')}`).join(', ')}`,
    '',
    '## Faults (s from the start)',
    '',
    '| fault | from | to | note |',
    '|---|---|---|---|',
    ...run.windows.map(w => `| ${FAULTS[w.kind].label} | ${(w.start / 1000).toFixed(1)} | ${(w.end / 1000).toFixed(1)} | ${w.note ?? ''} |`),
    '',
    'Plot: soak.svg.',
    ...run.verdicts.filter(v => v.details?.length).flatMap(v => ['', `## ${v.name}: details`, '', ...(v.details ?? []).map(line => `- ${line}`)]),
    '',
  ]
  writeFileSync(join(out, 'summary.md'), lines.join('\n'))
  return lines
}
