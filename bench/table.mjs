// @ts-check
/**
 * The bench's table: the machine and every peer's version at its head, one row a path (req/s, its rounds, latency and
 * its ratio to the anchors nginx, fastify and h3), then one row a check (figure, target, verdict), then the peers that
 * failed to start.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { median } from './load.mjs'
import { has } from './processes.mjs'
import { root } from './setup.mjs'

/**
 * A path of the table: its figures, or the reason it was not measured. `anchor` marks the peers the ratio columns
 * divide by.
 * @typedef {{
 *   name: string, anchor?: 'nginx' | 'fastify' | 'h3', failed?: string,
 *   rps?: number, min?: number, max?: number, p50?: number, p99?: number, non2xx?: number,
 * }} PathRow
 */
/**
 * A check of the table; `ok` undefined: not measured; null: a figure shown without a target.
 * @typedef {{ what: string, figure: string, target: string, ok: boolean | null | undefined }} Check
 */
/** @typedef {{ paths?: PathRow[], checks: Check[] }} ScenarioResult what a scenario gives the table */

/**
 * A path's row from its runs: the median rate with its rounds' min–max, median p50 and p99, all non-2xx answers.
 * @param {string} name
 * @param {import('./load.mjs').LoadRun[]} runs
 * @param {PathRow['anchor']} [anchor]
 * @returns {PathRow}
 */
export function pathRow(name, runs, anchor = undefined) {
  const rates = runs.map(run => run.rps)
  return {
    name, anchor, rps: median(rates), min: Math.min(...rates), max: Math.max(...rates),
    p50: median(runs.map(run => run.p50)), p99: median(runs.map(run => run.p99)), non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0),
  }
}

/** The machine, Node and every peer's version, for the table's head. */
export function versions() {
  const first = (command, args) => {
    const result = spawnSync(command, args, { encoding: 'utf8' })
    return `${result.stdout ?? ''}${result.stderr ?? ''}`.split('\n')[0].trim() || 'not installed'
  }
  const pkg = name => JSON.parse(readFileSync(`${root}node_modules/${name}/package.json`, 'utf8')).version
  const memory = Number(/MemTotal:\s+(\d+)/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0) / 1024 / 1024
  return [
    `Machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${memory.toFixed(0)} GiB, Linux ${first('uname', ['-r'])}`,
    `Node ${process.version}; nuxt ${pkg('nuxt')}, undici ${pkg('undici')}; fastify ${pkg('fastify')} + @fastify/http-proxy ${pkg('@fastify/http-proxy')}; h3 ${pkg('h3')}`,
    `${has('nginx') ? first('nginx', ['-v']) : 'nginx: not installed'}; ${has('wrk') ? first('wrk', ['-v']).replace(/ Copyright.*/, '') : `autocannon ${pkg('autocannon')}`}; ${has('redis-server') ? first('redis-server', ['--version']).replace(/ sha=.*/, '') : 'redis-server: not installed'}`,
  ]
}

const verdict = ok => (ok === undefined ? '**not measured**' : ok === null ? '—' : ok ? 'holds' : '**NOT MET**')
const ratio = (a, b) => (a?.rps && b?.rps ? (a.rps / b.rps).toFixed(2) : '—')

/**
 * The table's lines, Markdown.
 * @param {{ head: string[], load: string, paths: PathRow[], checks: Check[], failed: Map<string, string> }} table
 */
export function tableLines({ head, load, paths, checks, failed }) {
  const anchor = name => paths.find(path => path.anchor === name && !path.failed)
  const [nginx, fastify, h3] = [anchor('nginx'), anchor('fastify'), anchor('h3')]
  return [
    ...head.map(line => `${line}  `),
    load,
    ...(paths.length ? ['', '| Path | req/s (median) | rounds min–max | p50 ms | p99 ms | × nginx | × fastify | × h3 proxyRequest | non-2xx |', '|---|---|---|---|---|---|---|---|---|'] : []),
    ...paths.map((f) => {
      if (f.failed || f.rps === undefined) return `| ${f.name} | **FAILED**: ${f.failed ?? 'not run'} | | | | | | | |`
      return `| ${f.name} | ${Math.round(f.rps)} | ${Math.round(f.min ?? 0)}–${Math.round(f.max ?? 0)} | ${f.p50?.toFixed(2)} | ${f.p99?.toFixed(2)} | ${ratio(f, nginx)} | ${ratio(f, fastify)} | ${ratio(f, h3)} | ${f.non2xx} |`
    }),
    '',
    '| Check | Figure | Target | |',
    '|---|---|---|---|',
    ...checks.map(({ what, figure, target, ok }) => `| ${what} | ${figure} | ${target} | ${verdict(ok)} |`),
    ...(failed.size ? ['', `Failed to start: ${[...failed].map(([name, reason]) => `${name} (${reason})`).join('; ')}`] : []),
  ]
}
