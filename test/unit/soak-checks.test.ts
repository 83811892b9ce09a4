import { describe, expect, it } from 'vitest'
import { checkAccessLines, checkErrors, checkFlatness, checkLogs, checkPool, checkRevocations, checkStreams, crashLines } from '../../soak/checks.mjs'
import { checkLatencyRecovery, checkMemorySlope, fitLine } from '../../soak/trend-checks.mjs'
import { explainFailure, faultPlan, flatnessWindows } from '../../soak/schedule.mjs'

// The soak's verdicts are pure functions of what a run recorded: each is shown here to fail on what it must catch
// (the run itself, `npm run soak`, is never a timed test of this suite).

const outcome = (fields: Record<string, unknown>) => ({ op: 'get', instance: 'a', id: 'soak-1', start: 10_000, end: 10_050, ok: true, reached: true, status: 200, ...fields })
const windows = [
  { kind: 'restart' as const, start: 5_000, end: 8_000 },
  { kind: 'iam-stall' as const, start: 30_000, end: 40_000 },
  { kind: 'backend-reset' as const, start: 50_000, end: 60_000 },
]

describe('soak: which fault explains a failure', () => {
  it.each([
    ['a login 504 during the IAM stall', { op: 'login', status: 504, start: 35_000, end: 37_000 }, 'iam-stall'],
    ['a login 504 whose timeout ends just after it', { op: 'login', status: 504, start: 39_500, end: 41_500 }, 'iam-stall'],
    ['a session read with user null during the stall', { op: 'session', error: 'user-null', start: 31_000, end: 33_000 }, 'iam-stall'],
    ['a login 504 outside any window', { op: 'login', status: 504, start: 20_000, end: 22_000 }, undefined],
    ['a proxied GET 502 during backend resets (only streams are cut)', { op: 'get', status: 502, start: 55_000, end: 55_010 }, undefined],
    ['a download cut during backend resets', { op: 'download', error: 'premature-close', start: 55_000, end: 55_100 }, 'backend-reset'],
    ['an upload 502 during backend resets', { op: 'upload', status: 502, start: 52_000, end: 52_010 }, 'backend-reset'],
    ['a tunnel of the restarted instance closed by its drain', { op: 'tunnel', instance: 'b', error: 'closed 1006', start: 1_000, end: 6_000 }, 'restart'],
    ['a tunnel of the other instance closed then', { op: 'tunnel', instance: 'a', error: 'closed 1006', start: 1_000, end: 6_000 }, undefined],
  ])('%s', (_, fields, expected) => {
    expect(explainFailure(outcome({ ok: false, ...fields }) as never, windows)).toBe(expected)
  })

  it('fails the errors check on one unexplained failure, naming it', () => {
    const verdict = checkErrors([outcome({}), outcome({ id: 'soak-2', ok: false, status: 500, error: 'status' })] as never, windows)
    expect(verdict.pass).toBe(false)
    expect(verdict.details?.[0]).toContain('soak-2 get on a')
  })

  it('says how long a kept-alive connection had been idle when a request on it failed (the keep-alive race shows so)', () => {
    const verdict = checkErrors([outcome({ id: 'soak-3', op: 'logout', instance: 'b', start: 66_000, end: 66_004, ok: false, status: undefined, error: 'ECONNRESET', reusedAfterMs: 6_002 })] as never, windows)
    expect(verdict.details).toEqual(['soak-3 logout on b at 66.0–66.0 s: no answer (ECONNRESET), on a kept-alive connection idle 6,002 ms'])
  })

  it('scales the plan to the run, every fault in order and before the last tenth', () => {
    for (const seconds of [120, 600]) {
      const plan = faultPlan(seconds)
      expect(plan.map(fault => fault.at)).toEqual([...plan.map(fault => fault.at)].sort((a, b) => a - b))
      expect(plan.at(-1)!.at).toBeLessThan(flatnessWindows(seconds * 1000).end[0] / 1000)
    }
  })
})

describe('soak: the other checks', () => {
  const samples = (heap: (t: number) => number, rss = (_t: number) => 100) => Array.from({ length: 120 }, (_, i) => ({
    t: i * 1000, instance: 'a', pid: 7, rssMiB: rss(i), fds: 40, pool: 2, heapMiB: heap(i) + (i % 3 === 0 ? 0 : 6), streams: 0, tunnels: 0,
  }))

  it('passes a flat run, fails a heap that grows by a fifth, and lets a fall pass', () => {
    expect(checkFlatness(samples(() => 20), 120_000).pass).toBe(true)
    const leaking = checkFlatness(samples(t => 20 + t / 25), 120_000)
    expect(leaking.pass).toBe(false)
    expect(leaking.line).toMatch(/heap .*\(over\)/)
    expect(checkFlatness(samples(() => 20, t => 140 - t / 4), 120_000).pass).toBe(true)
  })

  it('judges the heap outside its young generation: a full new space at the end is no growth, a rising old generation is', () => {
    // ci31's instance b: the scavenges' low points at the end sat ~5 MiB above minute 2's (new space fuller), old flat.
    const sawing = (young: (t: number) => number, kept: (t: number) => number) => samples(() => 0).map(s => ({ ...s, heapMiB: kept(s.t / 1000) + young(s.t / 1000), youngMiB: young(s.t / 1000) }))
    const fuller = checkFlatness(sawing(t => (t < 60 ? 1 : 8) + (t % 3), () => 27), 120_000)
    expect(fuller.pass).toBe(true)
    expect(fuller.line).toContain('heap kept 27.0→27.0 MiB +0.0%')
    const rising = checkFlatness(sawing(t => 1 + (t % 3), t => 27 + t / 30), 120_000)
    expect(rising.pass).toBe(false)
    expect(rising.line).toMatch(/heap kept 27\.6→30\.6 MiB \+10\.9% \(over\)/)
  })

  it('reads the heap as the last mark-compacts left its old space: promoted garbage with none lately is no growth, a rising level is', () => {
    // ci35's instance a: every mark-compact left 26.4–26.9 MiB, then none in the last 25 s while old space filled to 34.6.
    const collecting = (kept: (t: number) => number, lastCollection: number) => samples(() => 0).map((s) => {
      const t = s.t / 1000
      const since = t <= lastCollection ? t % 2 : t - lastCollection
      return { ...s, majorGcs: Math.floor(Math.min(t, lastCollection) / 2), oldMiB: kept(t) + since * 0.4, youngMiB: 1, heapMiB: kept(t) + since * 0.4 + 1 }
    })
    const quiet = checkFlatness(collecting(() => 26.5, 95), 120_000)
    expect(quiet.pass).toBe(true)
    expect(quiet.line).toContain('heap kept 26.5→26.5 MiB +0.0%')
    expect(checkFlatness(collecting(t => 26.5 + t / 30, 120), 120_000).line).toMatch(/heap kept 27\.\d→30\.\d MiB \+1\d\.\d% \(over\)/)
  })

  it('takes the level at minute 2 after a warm-up that ran late, not while the caches still filled', () => {
    // Heap filling up to 55 s, flat after: measured from 18 s it reads as growth; from the warm-up's end it is flat.
    const filling = samples(t => (t < 55 ? 12 + t / 5 : 23))
    expect(checkFlatness(filling, 120_000).pass).toBe(false)
    expect(checkFlatness(filling, 120_000, 55_000).pass).toBe(true)
    expect(flatnessWindows(120_000, 55_000).baseline).toEqual([55_000, 67_000])
    expect(flatnessWindows(120_000, 5_000).baseline).toEqual([18_000, 30_000])
  })

  it('fails a request without its access line, one with two, and a line of no request', () => {
    const outcomes = [outcome({ id: 'x1' }), outcome({ id: 'x2' }), outcome({ id: 'x3', reached: false })]
    expect(checkAccessLines(outcomes as never, new Map([['a', new Map([['x1', 1], ['x2', 1]])]])).pass).toBe(true)
    expect(checkAccessLines(outcomes as never, new Map([['a', new Map([['x1', 1]])]])).pass).toBe(false)
    expect(checkAccessLines(outcomes as never, new Map([['a', new Map([['x1', 1], ['x2', 2]])]])).pass).toBe(false)
    expect(checkAccessLines(outcomes as never, new Map([['a', new Map([['x1', 1], ['x2', 1], ['other', 1]])]])).pass).toBe(false)
  })

  it('fails when one logged-out cookie is still a session on one instance', () => {
    const logout = { cookie: 'svc_session=v1.x', instance: 'a', at: 1000 }
    expect(checkRevocations([{ logout, instance: 'a', user: null, apiStatus: 401 }, { logout, instance: 'b', user: null, apiStatus: 401 }], 1).pass).toBe(true)
    expect(checkRevocations([{ logout, instance: 'a', user: null, apiStatus: 401 }, { logout, instance: 'b', user: { id: 'u' }, apiStatus: 200 }], 1).pass).toBe(false)
  })

  it('fails a completed stream whose bytes differ', () => {
    expect(checkStreams([outcome({ op: 'download', stream: { bytes: 10, match: true } })] as never).pass).toBe(true)
    expect(checkStreams([outcome({ op: 'download', stream: { bytes: 10, match: false } })] as never).pass).toBe(false)
  })

  it('finds stack traces, fatal lines, uncaught errors and Node warnings in JSON and plain lines, not a fault\'s warning', () => {
    const text = [
      '{"level":30,"msg":"GET /api/items 200"}',
      '{"level":60,"msg":"lỗi không ai bắt: dừng tiến trình"}',
      '{"level":"fatal","msg":"không mở được cổng HTTP"}',
      '{"level":"error","msg":"(node:7951) MaxListenersExceededWarning: Possible EventEmitter memory leak detected."}',
      '{"level":"warn","msg":"Redis không dùng được (connect ECONNREFUSED 127.0.0.1:43403): dùng bộ đếm cục bộ."}',
      '{"level":50,"msg":"x","error":"TypeError: boom\\n    at f (file.js:1:1)"}',
      '    at Object.<anonymous> (/x.js:1:1)',
      'plain text',
    ].join('\n')
    expect(crashLines(text)).toHaveLength(5)
    expect(checkLogs([{ instance: 'a', pid: 1, stdout: '{"level":30}', stderr: '(node:1) MaxListenersExceededWarning: x' }]).pass).toBe(false)
  })

  it('fails a pool over its limit, and a connection left open once the load stopped', () => {
    const quiet = [{ t: 0, instance: 'a', pid: 1, rssMiB: 1, fds: 1, pool: 0, streams: 0, tunnels: 0 }]
    expect(checkPool([{ ...quiet[0], pool: 256 }], 256, quiet).pass).toBe(true)
    expect(checkPool([{ ...quiet[0], pool: 257 }], 256, quiet).pass).toBe(false)
    expect(checkPool([{ ...quiet[0], pool: 3 }], 256, [{ ...quiet[0], pool: 1 }]).pass).toBe(false)
  })
})

describe('soak: memory kept per request (the slope)', () => {
  /** A 3-minute run at 40 requests a second on one instance: its heap (a sawtooth of garbage) and every request. */
  function run(keptPerRequest: number, noiseMiB = 0) {
    const rate = 40
    const outcomes = Array.from({ length: 180 * rate }, (_, i) => outcome({ id: `r${i}`, start: (i * 1000) / rate, end: (i * 1000) / rate + 5 }))
    const samples = Array.from({ length: 181 }, (_, s) => ({
      t: s * 1000, instance: 'a', pid: 7, rssMiB: 150, fds: 40, pool: 2, streams: 0, tunnels: 0,
      // 120 MiB live, garbage rising 0 to 8 MiB between collections every 7 s, a leak of `keptPerRequest` bytes each.
      heapMiB: 120 + ((s % 7) / 7) * 8 + (s * rate * keptPerRequest) / 2 ** 20 + (s % 5 === 0 ? noiseMiB : 0),
    }))
    return { outcomes, samples }
  }

  it('passes a heap that only saws, and fails one that keeps 1 KiB a request, which the 10% band lets through', () => {
    const flat = run(0)
    expect(checkMemorySlope(flat.samples, flat.outcomes as never, 180_000).pass).toBe(true)
    const leaking = run(1024)
    expect(checkFlatness(leaking.samples, 180_000).pass).toBe(true)
    const verdict = checkMemorySlope(leaking.samples, leaking.outcomes as never, 180_000)
    expect(verdict.pass).toBe(false)
    expect(verdict.line).toMatch(/^memory slope: V8 heap kept per request after the warm-up NOT within 400 B .*a: 1,0\d\d ± \d+ B\/request over [\d,]+ requests \(heap floors of 12 spans\) \(over\)\)$/)
  })

  it('fits the old space the collector kept after each mark-compact when there are enough: a leak under a falling heap fails', () => {
    const { samples, outcomes } = run(0)
    // The heap's floor falls 10 MiB (a cache turning over its entries), old space after each mark-compact (every 10 s)
    // grows by 1 KiB a request: the floors alone would pass it.
    const leaking = samples.map(s => ({ ...s, heapMiB: s.heapMiB - s.t / 18_000, majorGcs: Math.floor(s.t / 10_000), oldMiB: 60 + (s.t / 1000 * 40 * 1024) / 2 ** 20 }))
    expect(checkMemorySlope(leaking.map(s => ({ ...s, majorGcs: undefined })), outcomes as never, 180_000).pass).toBe(true)
    const verdict = checkMemorySlope(leaking, outcomes as never, 180_000)
    expect(verdict.pass).toBe(false)
    expect(verdict.line).toMatch(/a: 1,0\d\d ± \d+ B\/request over [\d,]+ requests \(old space after 16 mark-compacts\) \(over\)/)
    const flat = samples.map(s => ({ ...s, majorGcs: Math.floor(s.t / 10_000), oldMiB: 60 }))
    expect(checkMemorySlope(flat, outcomes as never, 180_000).pass).toBe(true)
  })

  it('lets a run whose floors are noise pass: the slope must stand above the limit by twice its error', () => {
    const noisy = run(300, 6)
    const verdict = checkMemorySlope(noisy.samples, noisy.outcomes as never, 180_000)
    expect(verdict.pass).toBe(true)
  })

  it('fits from the warm-up\'s end, and fails when too few samples are left to fit', () => {
    const { samples, outcomes } = run(0)
    expect(checkMemorySlope(samples.slice(0, 38), outcomes as never, 180_000).details).toEqual(['a: too few samples after the warm-up (11)'])
    expect(checkMemorySlope(samples, outcomes as never, 180_000, 170_000).details).toEqual(['a: too few samples after the warm-up (11)'])
    expect(checkMemorySlope(samples, outcomes as never, 180_000, 100_000).pass).toBe(true)
  })

  it('fits a line and its error', () => {
    expect(fitLine([[0, 1], [1, 3], [2, 5]])).toEqual({ slope: 2, error: 0 })
  })
})

describe('soak: latency back after Redis', () => {
  /** Logins, session reads and GETs every 50 ms for 120 s, 20 ms each, `slow` ms from Redis's return for `slowForMs`. */
  function exchanges(slowForMs: number, slow = 800) {
    const back = 64_000
    return Array.from({ length: 2_400 }, (_, i) => {
      const start = i * 50
      const late = start >= back && start < back + slowForMs
      return outcome({ id: `x${i}`, op: ['login', 'session', 'get'][i % 3], start, end: start + (late ? slow : 20) })
    })
  }
  const faults = [{ kind: 'redis-failover' as const, start: 60_000, end: 64_000 }, { kind: 'upload-abort' as const, start: 90_000, end: 98_000 }]

  it('says how long p99 took to come back, and passes within 5 s of Redis answering', () => {
    const verdict = checkLatencyRecovery(exchanges(2_000) as never, faults)
    expect(verdict.pass).toBe(true)
    expect(verdict.line).toContain('redis-failover at 60 s: back 2.00 s after Redis answered (p99 before→after: login 20→20 ms, session 20→20 ms, get 20→20 ms)')
  })

  it('fails when p99 stays up past 5 s, naming the last window', () => {
    const verdict = checkLatencyRecovery(exchanges(8_000) as never, faults)
    expect(verdict.pass).toBe(false)
    expect(verdict.line).toContain('redis-failover at 60 s: back 8.00 s after Redis answered (late)')
    expect(verdict.details?.[0]).toMatch(/^redis-failover at 60 s: p99 not back within 5 s of Redis answering at 64.0 s/)
  })

  it('takes noise of less than 100 ms as back (a loaded 2-core machine), and a fault with no room after it as not judged', () => {
    expect(checkLatencyRecovery(exchanges(60_000, 110) as never, faults).pass).toBe(true)
    expect(checkLatencyRecovery(exchanges(60_000, 130) as never, faults).pass).toBe(false)
    const crowded = [{ kind: 'redis-restart' as const, start: 60_000, end: 64_000 }, { kind: 'redis-empty' as const, start: 65_000, end: 68_000 }]
    expect(checkLatencyRecovery(exchanges(0) as never, crowded).line).toContain('redis-restart at 60 s: not judged')
    // Room for a few windows but not for 5 s: back at once is said, not back yet is not judged (never 'late').
    const short = [faults[0]!, { kind: 'upload-abort' as const, start: 70_000, end: 78_000 }]
    expect(checkLatencyRecovery(exchanges(0) as never, short).line).toContain('redis-failover at 60 s: back 0.00 s')
    const slow = checkLatencyRecovery(exchanges(60_000) as never, short)
    expect([slow.pass, slow.line]).toEqual([true, expect.stringContaining('redis-failover at 60 s: not judged')])
  })
})
