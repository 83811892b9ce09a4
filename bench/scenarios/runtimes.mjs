// @ts-check
/**
 * The headline duel on each Node the bench is given: the gateway as shipped against @fastify/http-proxy, both on the
 * same Node, head to head, for the machine's Node and every binary in BENCH_NODES (space-separated paths; by default
 * the Node 24 that `node .ci/matrix.mjs` installs under .ci/runtimes/, when it is there). Then the gateway on each other
 * Node against the gateway on the machine's, head to head. All in one run, on the same backend, Redis and IAM.
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { headToHead, median, spread } from '../load.mjs'
import { log, root } from '../setup.mjs'

/** The Node binaries to compare with the machine's. */
function otherNodes() {
  if (process.env.BENCH_NODES) return process.env.BENCH_NODES.split(/\s+/).filter(Boolean)
  const matrix = join(root, '.ci', 'runtimes', 'node-24', 'node_modules', `node-${process.platform}-${process.arch}`, 'bin', 'node')
  return existsSync(matrix) ? [matrix] : []
}

/** @param {import('../setup.mjs').Bench} bench */
export async function run(bench) {
  const others = otherNodes()
  if (!others.length) log('runtimes: no other Node (set BENCH_NODES, or run `node .ci/matrix.mjs` once): the machine\'s alone')
  const backend = await bench.tinyBackend()
  const cookie = await bench.cookie()
  /** @type {import('../table.mjs').Check[]} */
  const checks = []
  /** @type {Record<string, import('../load.mjs').Target>} */
  const gateways = {}
  for (const node of [process.execPath, ...others]) {
    const version = execFileSync(node, ['--version']).toString().trim()
    const gateway = await bench.startGateway(`gateway as shipped, Node ${version}`, await bench.shippedEnv(), `shipped-gateway-${version}`, 0, node)
    const fastify = await bench.startScript(`@fastify/http-proxy, Node ${version}`, 'fastify-proxy.mjs', [backend], 0, node)
    gateways[version] = [version, `${gateway.url}/api/ping`, { cookie }]
    const duel = await headToHead([`fastify ${version}`, `${fastify.url}/api/ping`, { cookie }], gateways[version])
    checks.push({ what: `Node ${version}: proxy as shipped vs @fastify/http-proxy on the same Node`, figure: `head to head ${spread(duel.ratios)}, p99 ${duel.p99.b.toFixed(2)} vs ${duel.p99.a.toFixed(2)} ms`, target: 'shown', ok: null })
    log(`runtimes: Node ${version} done (${median(duel.ratios).toFixed(2)}×)`)
  }
  const [first, ...rest] = Object.values(gateways)
  for (const other of rest) {
    const duel = await headToHead(/** @type {import('../load.mjs').Target} */ (first), other)
    checks.push({ what: `proxy as shipped: Node ${other[0]} vs Node ${first?.[0]}`, figure: `head to head ${spread(duel.ratios)}`, target: 'shown', ok: null })
  }
  return { checks }
}
