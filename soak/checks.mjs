// @ts-check
/**
 * The soak's checks (pure): each takes what the run recorded and gives a verdict, a one-line summary and, when it
 * fails, the lines that show why. soak/run.mjs gathers the records; soak/report.mjs writes the verdicts.
 */
import { afterMarkCompacts } from './sampler.mjs'
import { explainFailure, FAULTS, flatnessWindows } from './schedule.mjs'

/**
 * @typedef {import('./load.mjs').Outcome} Outcome
 * @typedef {import('./sampler.mjs').Sample} Sample
 * @typedef {import('./schedule.mjs').FaultWindow} FaultWindow
 * @typedef {{ name: string, pass: boolean, line: string, details?: string[] }} Verdict
 * @typedef {{ instance: string, pid: number, stdout: string, stderr: string, exitCode?: number | null }} ProcessLog
 */

/** Growth allowed between the level at minute 2 and the end. */
export const FLATNESS_LIMIT = 0.1

const count = (/** @type {number} */ n) => n.toLocaleString('en-US')
const median = (/** @type {number[]} */ values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}
const describe = (/** @type {Outcome} */ o) => `${o.id} ${o.op} on ${o.instance} at ${(o.start / 1000).toFixed(1)}–${(o.end / 1000).toFixed(1)} s: ${o.status ?? 'no answer'}${o.error ? ` (${o.error})` : ''}${o.reusedAfterMs === undefined ? '' : `, on a kept-alive connection idle ${count(o.reusedAfterMs)} ms`}`
const tally = (/** @type {string[]} */ keys) => {
  const counts = new Map()
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1)
  return [...counts].map(([key, n]) => `${key} ${count(n)}`).join(', ')
}

/** Every failed exchange is explained by a fault window (checksum mismatches are the streams check's). */
export function checkErrors(/** @type {Outcome[]} */ outcomes, /** @type {FaultWindow[]} */ windows) {
  const failed = outcomes.filter(o => !o.ok && o.error !== 'checksum')
  const explained = failed.map(o => ({ o, kind: explainFailure(o, windows) }))
  const unexplained = explained.filter(e => !e.kind).map(e => e.o)
  const by = tally(explained.filter(e => e.kind).map(e => /** @type {string} */ (e.kind)))
  return {
    name: 'errors',
    pass: unexplained.length === 0,
    line: unexplained.length === 0
      ? `errors: ${count(failed.length)} of ${count(outcomes.length)} exchanges failed, each explained by a fault window${by ? ` (${by})` : ''}`
      : `errors: ${count(unexplained.length)} failed exchanges no fault explains (of ${count(failed.length)} failed, ${count(outcomes.length)} in all)`,
    details: unexplained.slice(0, 30).map(describe),
  }
}

/**
 * Lines of a log that show an uncaught exception, a stack trace, a fatal level or a warning of Node's own (the
 * gateway logs what reaches stderr, `(node:<pid>) MaxListenersExceededWarning: …` included, as error lines). JSON
 * lines are read by every value they carry; pino writes the level as a name (`"fatal"`) or a number (60).
 */
export function crashLines(/** @type {string} */ text) {
  return text.split('\n').filter((line) => {
    let values = [line]
    if (line.startsWith('{')) {
      try {
        const entry = JSON.parse(line)
        if (entry.level === 'fatal' || entry.level >= 60 || entry.stack) return true
        values = Object.values(entry).flatMap(value => String(value).split('\n'))
      }
      catch {
        // not JSON: read as it is
      }
    }
    return values.some(value => /^\s+at\s|Uncaught|unhandled|không ai (bắt|xử lý)|\b(TypeError|ReferenceError|RangeError|SyntaxError)\b|\(node:\d+\) \w*Warning\b/i.test(value))
  })
}

/** No uncaught exception, stack trace, fatal line or Node warning in any gateway log, and nothing on stderr. */
export function checkLogs(/** @type {ProcessLog[]} */ logs) {
  const found = logs.flatMap(log => [
    ...crashLines(log.stdout).map(line => `${log.instance} (pid ${log.pid}) stdout: ${line.slice(0, 300)}`),
    ...log.stderr.split('\n').filter(Boolean).map(line => `${log.instance} (pid ${log.pid}) stderr: ${line.slice(0, 300)}`),
  ])
  const lines = logs.reduce((sum, log) => sum + log.stdout.split('\n').filter(Boolean).length, 0)
  return {
    name: 'logs',
    pass: found.length === 0,
    line: found.length === 0
      ? `logs: no uncaught exception, stack trace, fatal line or Node warning in ${logs.length} gateway processes' logs (${count(lines)} lines), stderr empty`
      : `logs: ${count(found.length)} lines show an exception, a stack trace, a fatal line, a Node warning or stderr output`,
    details: found.slice(0, 30),
  }
}

/**
 * Every logout made during the run still holds on every instance at the end.
 * @param {{ logout: { cookie: string, instance: string, at: number }, instance: string, user: unknown, apiStatus?: number }[]} results
 * @param {number} logouts
 */
export function checkRevocations(results, logouts) {
  const lost = results.filter(r => r.user !== null || r.apiStatus !== 401)
  const instances = [...new Set(results.map(r => r.instance))].sort().join(' and ')
  return {
    name: 'revocations',
    pass: lost.length === 0 && results.length > 0,
    line: lost.length === 0
      ? `revocations: all ${count(logouts)} logouts of the run hold on ${instances} at the end (GET /auth/session: user null; GET /api/items: 401)`
      : `revocations: ${count(lost.length)} of ${count(results.length)} end checks found a logged-out cookie still a session`,
    details: lost.slice(0, 30).map(r => `logout on ${r.logout.instance} at ${(r.logout.at / 1000).toFixed(1)} s, checked on ${r.instance}: user ${r.user === null ? 'null' : 'present'}, /api ${r.apiStatus}`),
  }
}

/**
 * Every exchange that reached a gateway has exactly one access line there, with its request id.
 * @param {Outcome[]} outcomes
 * @param {Map<string, Map<string, number>>} lines per instance: access lines per request id (every process of it)
 */
export function checkAccessLines(outcomes, lines) {
  const reached = outcomes.filter(o => o.reached)
  const missing = reached.filter(o => !lines.get(o.instance)?.has(o.id))
  const doubled = reached.filter(o => (lines.get(o.instance)?.get(o.id) ?? 0) > 1)
  const ours = new Set(outcomes.map(o => `${o.instance} ${o.id}`))
  const strangers = [...lines].flatMap(([instance, ids]) => [...ids.keys()].filter(id => !ours.has(`${instance} ${id}`)).map(id => `${instance} ${id}`))
  const per = [...lines].map(([instance, ids]) => `${instance} ${count([...ids.values()].reduce((a, b) => a + b, 0))}`).join(', ')
  const pass = missing.length === 0 && doubled.length === 0 && strangers.length === 0
  return {
    name: 'access lines',
    pass,
    line: pass
      ? `access lines: each of the ${count(reached.length)} exchanges that reached a gateway has exactly one access line with its request id (${per}), and no other line`
      : `access lines: ${count(missing.length)} exchanges without an access line, ${count(doubled.length)} with more than one, ${count(strangers.length)} lines of no exchange`,
    details: [...missing.slice(0, 20).map(o => `missing: ${describe(o)}`), ...doubled.slice(0, 5).map(o => `doubled: ${describe(o)}`), ...strangers.slice(0, 5).map(s => `no exchange: ${s}`)],
  }
}

/** Every stream that completed (upload, download, tunnel) carried exactly the bytes sent (length and SHA-256). */
export function checkStreams(/** @type {Outcome[]} */ outcomes) {
  const completed = outcomes.filter(o => o.stream)
  const bad = completed.filter(o => !o.stream?.match)
  const cut = outcomes.filter(o => ['upload', 'download', 'tunnel'].includes(o.op) && !o.stream).length
  const mib = completed.reduce((sum, o) => sum + (o.stream?.bytes ?? 0), 0) / 2 ** 20
  const slow = completed.filter(o => o.note === 'slow-reader').length
  return {
    name: 'streams',
    pass: bad.length === 0 && completed.length > 0,
    line: bad.length === 0
      ? `streams: all ${count(completed.length)} completed streams matched byte for byte, ${count(Math.round(mib))} MiB (${tally(completed.map(o => o.op))}; ${count(slow)} read slowly); ${count(cut)} cut by a fault or by the client`
      : `streams: ${count(bad.length)} of ${count(completed.length)} completed streams did not carry the bytes sent`,
    details: bad.slice(0, 20).map(o => `${describe(o)}, ${o.stream?.bytes} bytes`),
  }
}

/**
 * RSS, heap and open descriptors at the end within FLATNESS_LIMIT above their level at minute 2, per instance (the
 * process that ran through both windows). RSS and descriptors: the median over each window, so no single sample (a
 * burst of connections) decides. The heap: what the collector kept (heapLevel), which garbage does not move.
 * @param {Sample[]} samples
 * @param {number} runMs
 * @param {number} [warmUpEndMs] when the warm-up ended (see flatnessWindows)
 */
export function checkFlatness(samples, runMs, warmUpEndMs = 0) {
  const { baseline, end } = flatnessWindows(runMs, warmUpEndMs)
  const inside = (/** @type {number[]} */ [from, to]) => (/** @type {Sample} */ s) => s.t >= from && s.t <= to
  const details = []
  const parts = []
  let pass = true
  for (const instance of [...new Set(samples.map(s => s.instance))].sort()) {
    const own = samples.filter(s => s.instance === instance)
    const pid = own.filter(inside(end)).at(-1)?.pid
    const lived = own.filter(s => s.pid === pid)
    const [first, last] = [lived.filter(inside(baseline)), lived.filter(inside(end))]
    if (first.length < 3 || last.length < 3) {
      pass = false
      details.push(`${instance}: too few samples (${first.length} at minute 2, ${last.length} at the end)`)
      continue
    }
    const levels = {
      'RSS': [median(first.map(s => s.rssMiB)), median(last.map(s => s.rssMiB)), 'MiB'],
      'heap kept': [heapLevel(lived, baseline), heapLevel(lived, end), 'MiB'],
      'fds': [median(first.map(s => s.fds)), median(last.map(s => s.fds)), ''],
    }
    const shown = []
    for (const [name, [from, to, unit]] of Object.entries(levels)) {
      const growth = to / from - 1
      const ok = Number.isFinite(growth) && growth <= FLATNESS_LIMIT
      if (!ok) pass = false
      shown.push(`${name} ${from.toFixed(unit ? 1 : 0)}→${to.toFixed(unit ? 1 : 0)}${unit ? ` ${unit}` : ''} ${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)}%${ok ? '' : ' (over)'}`)
    }
    parts.push(`${instance}: ${shown.join(', ')}`)
  }
  return {
    name: 'flat',
    pass: pass && parts.length > 0,
    line: `flat: RSS, heap and descriptors at the end ${pass ? 'within' : 'NOT within'} ${FLATNESS_LIMIT * 100}% of minute 2 (${parts.join('; ')})`,
    details,
  }
}

/**
 * The heap's level in a window: V8's old space as a mark-compact left it, read as the memory slope reads it
 * (trend-checks.mjs): the median of the window's first samples after a mark-compact, else the latest such sample in
 * the three windows' length before its end. Between mark-compacts old space also holds promoted garbage: ci35's
 * instance a had none in its last 25 s, and the lowest sample of its heap less the young generation read +12.8%
 * while every mark-compact had left 26.4–26.9 MiB. Without mark-compacts to read (a /metrics without their count, or
 * none near the window): heapFloor.
 */
function heapLevel(/** @type {Sample[]} */ lived, /** @type {number[]} */ [from, to]) {
  const collected = afterMarkCompacts(lived)
  const inside = collected.filter(s => s.t >= from && s.t <= to)
  if (inside.length > 0) return median(inside.map(s => s.oldMiB ?? 0))
  const lately = collected.filter(s => s.t <= to && s.t >= to - 3 * (to - from)).at(-1)
  return lately?.oldMiB ?? heapFloor(lived.filter(s => s.t >= from && s.t <= to))
}

/**
 * The heap's floor in a window: its lowest sample of the heap in use less the young generation. Only a mark-compact
 * lowers that part, so its low point is what the last one kept plus what was promoted since: garbage in the young
 * generation (up to ~16 MiB, which decided the floor when it was taken from the whole heap) no longer does. Samples
 * without the young generation's size (a gateway whose /metrics lacks it) count whole.
 */
function heapFloor(/** @type {Sample[]} */ window) {
  return Math.min(...window.filter(s => s.heapMiB !== undefined).map(s => (s.heapMiB ?? 0) - (s.youngMiB ?? 0)))
}

/**
 * No more connections in the proxy's backend pool than its limit, per instance, at any sample; none left (nor a
 * stream or tunnel open) once the load has stopped and the backend's keep-alive time has passed.
 * @param {Sample[]} samples
 * @param {number} limit
 * @param {Sample[]} quiet the samples taken after the load stopped
 */
export function checkPool(samples, limit, quiet) {
  const peaks = [...new Set(samples.map(s => s.instance))].sort().map(instance => [instance, Math.max(...samples.filter(s => s.instance === instance).map(s => s.pool))])
  const over = peaks.filter(([, peak]) => Number(peak) > limit)
  const left = quiet.filter(s => s.pool > 0 || (s.streams ?? 0) > 0 || (s.tunnels ?? 0) > 0)
  return {
    name: 'backend pool',
    pass: over.length === 0 && left.length === 0 && quiet.length > 0,
    line: `backend pool: at most ${peaks.map(([instance, peak]) => `${peak} (${instance})`).join(' and ')} pooled connections to the backend (limit ${limit} per instance); ${left.length === 0 ? 'none' : 'some'} left open after the load stopped (${quiet.map(s => `${s.instance}: ${s.pool} pooled, ${s.streams ?? '?'} streams, ${s.tunnels ?? '?'} tunnels`).join('; ')})`,
    details: over.map(([instance, peak]) => `${instance}: ${peak} pooled connections, over ${limit}`),
  }
}

/**
 * The restarted instance drained and exited 0 with no request cut, and every process exited 0 at the end.
 * @param {ProcessLog[]} logs
 * @param {string | undefined} restartNote
 */
export function checkDrains(logs, restartNote) {
  const cut = logs.flatMap(log => log.stdout.split('\n').filter(line => /"inFlight":[1-9]/.test(line) && /"reason"/.test(line)).map(line => `${log.instance} (pid ${log.pid}): ${line.slice(0, 200)}`))
  const bad = logs.filter(log => log.exitCode !== 0).map(log => `${log.instance} (pid ${log.pid}) exited ${log.exitCode}`)
  return {
    name: 'drains',
    pass: cut.length === 0 && bad.length === 0,
    line: `drains: ${logs.length} gateway processes exited ${bad.length ? 'NOT all with 0' : '0'}, ${cut.length ? 'some cut requests' : 'none cut a request'} (${FAULTS.restart.label}: ${restartNote ?? 'not run'})`,
    details: [...cut, ...bad],
  }
}
