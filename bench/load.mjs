// @ts-check
/**
 * The bench's load and its arithmetic: one wrk run (autocannon without wrk), interleaved rounds, head-to-head rounds,
 * WebSocket echo runs, medians and spreads. The length comes from BENCH_SECONDS (5) and BENCH_ROUNDS (3).
 */
import { execFileSync, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { cpuTicks, has, pin, wrkMs } from './processes.mjs'

/** A whole number of at least 1 from the environment, or `fallback` when unset; a bad value stops the bench, named. */
function wholeNumber(name, fallback) {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number of 1 or more, not '${raw}'`)
  return value
}

/** Seconds a load run lasts (BENCH_SECONDS). */
export const SECONDS = wholeNumber('BENCH_SECONDS', 5)
/** Interleaved rounds of each path (BENCH_ROUNDS). */
export const ROUNDS = wholeNumber('BENCH_ROUNDS', 3)
/** Head-to-head rounds: at least 4, and even, so that each path goes first as often as the other. */
export const DUEL_ROUNDS = Math.max(4, ROUNDS + (ROUNDS % 2))

/** @typedef {{ rps: number, p50: number, p99: number, non2xx: number }} LoadRun req/s, p50 and p99 (ms), non-2xx */
/** @typedef {[name: string, url: string, headers: Record<string, string>]} Target a path the bench loads */

export const median = (/** @type {number[]} */ values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/** A list of ratios as the table gives them: the median, then the rounds' min–max. */
export const spread = (/** @type {number[]} */ values) => `${median(values).toFixed(2)}× (rounds ${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`

/**
 * One load run from CPU 1 (wrk, else autocannon), `connections` connections for SECONDS.
 * @returns {Promise<LoadRun>}
 */
export function load(url, headers = {}, connections = 32) {
  const wrk = has('wrk')
  const args = wrk
    ? ['-t1', `-c${connections}`, `-d${SECONDS}s`, '--latency', ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]), url]
    : ['autocannon', '-c', String(connections), '-d', String(SECONDS), '-j', ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}=${v}`]), url]
  const [bin, argv] = pin(1, wrk ? 'wrk' : 'npx', args)
  return new Promise((resolve, reject) => {
    const child = spawn(bin, argv, { stdio: ['ignore', 'pipe', 'ignore'] })
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
    })
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`load on ${url} failed (exit ${code})`))
      if (!wrk) {
        const result = JSON.parse(out)
        return resolve({ rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx })
      }
      resolve({
        rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0),
        p50: wrkMs(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? '0ms'),
        p99: wrkMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? '0ms'),
        non2xx: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0),
      })
    })
  })
}

/**
 * Standalone rounds: one warm-up run of each target, then ROUNDS rounds in which each target is loaded alone, in turn.
 * @param {Target[]} targets
 * @param {(line: string) => void} log says when each round is done
 * @returns {Promise<Map<string, LoadRun[]>>} each target's runs, by name
 */
export async function interleavedRounds(targets, log) {
  for (const [, url, headers] of targets) await load(url, headers)
  const runs = new Map(targets.map(([name]) => [name, /** @type {LoadRun[]} */ ([])]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, url, headers] of targets) runs.get(name)?.push(await load(url, headers))
    log(`round ${round + 1}/${ROUNDS} done`)
  }
  return runs
}

/**
 * Head to head: both paths loaded at once in each round (two load generators on CPU 1), their servers sharing CPU 0.
 * Whatever the machine does to one round it does to both, so the ratio of their rates is the ratio of their costs.
 * Returns b's rate over a's, round by round (the order of a and b alternates), and each one's median p99 (ms).
 * Given the servers' process ids, also b's CPU time a request over a's, round by round (`cpuRatios`, from /proc):
 * what each request cost its server, whichever of the two the scheduler of a busy machine favoured in the round.
 * @param {Target} a
 * @param {Target} b
 * @param {{ a: number, b: number }} [pids]
 */
export async function headToHead([, urlA, headersA], [, urlB, headersB], rounds = DUEL_ROUNDS, pids = undefined) {
  const ratios = []
  const cpuRatios = []
  let non2xx = 0
  const p99s = { a: /** @type {number[]} */ ([]), b: /** @type {number[]} */ ([]) }
  for (let round = 0; round < rounds; round++) {
    const before = pids && { a: cpuTicks(pids.a), b: cpuTicks(pids.b) }
    const [a, b] = round % 2 === 0
      ? await Promise.all([load(urlA, headersA), load(urlB, headersB)])
      : (await Promise.all([load(urlB, headersB), load(urlA, headersA)])).reverse()
    ratios.push(b.rps / a.rps)
    if (pids && before) cpuRatios.push(((cpuTicks(pids.b) - before.b) / b.rps) / ((cpuTicks(pids.a) - before.a) / a.rps))
    non2xx += a.non2xx + b.non2xx
    p99s.a.push(a.p99)
    p99s.b.push(b.p99)
  }
  // A duel of answers that are not 2xx compares errors, not proxies: said, never taken for a figure.
  if (non2xx) throw new Error(`head to head: ${non2xx} answers were not 2xx (${urlA} against ${urlB})`)
  return { ratios, cpuRatios, p99: { a: median(p99s.a), b: median(p99s.b) } }
}

/**
 * Two paths compared as a scenario with one check does it: standalone interleaved rounds, then head to head. Returns
 * each one's runs, the check's figure (b over a, head to head and standalone) and the median head-to-head ratio.
 * @param {[Target, Target]} targets
 * @param {(line: string) => void} log
 */
export async function comparePaths(targets, log) {
  const runs = await interleavedRounds(targets, log)
  const duel = await headToHead(targets[0], targets[1])
  const [a, b] = targets.map(([name]) => runs.get(name) ?? [])
  const standalone = b.map((run, i) => run.rps / a[i].rps)
  return { runs: [a, b], figure: `head to head ${spread(duel.ratios)}; standalone rounds ${spread(standalone)}`, ratio: median(duel.ratios) }
}

/** One WebSocket echo run from CPU 1 (bench/ws-load.mjs: 32 connections × 16 in flight, 32 bytes); echoes a second. */
export function wsLoad(url) {
  const script = fileURLToPath(new URL('./ws-load.mjs', import.meta.url))
  const [bin, argv] = pin(1, process.execPath, [script, url, '32', String(SECONDS), '32', '16'])
  return JSON.parse(execFileSync(bin, argv, { encoding: 'utf8' })).rate
}
