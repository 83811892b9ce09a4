// @ts-check
/**
 * Memory per stream: 100 uploads and 100 downloads of 32 MiB at once (a quarter of the readers slow) through the
 * gateway with access log and metrics on (no Redis) and through a bare node:http pipe proxy (bench/pipe-proxy.mjs),
 * each a fresh process, alternating, two rounds each; the growth of each one's peak resident size, every byte checked
 * (processes.mjs streamMemory).
 */
import { median, spread } from '../load.mjs'
import { stop, streamMemory } from '../processes.mjs'

/** @param {import('../setup.mjs').Bench} bench */
export async function run(bench) {
  const backend = await bench.backend()
  const gateway = []
  const pipe = []
  let intact = true
  for (let round = 0; round < 2; round++) {
    // The 100 uploads stand for 100 clients but come from one address: no per-address cap on bodies in flight here.
    const proxied = await bench.startGateway('stream gateway', { APP_API_PROXY_TARGET: backend, APP_API_UPLOADS_PER_CLIENT: '0', ...(await bench.observedEnv()) }, 'stream-gateway')
    const viaGateway = await streamMemory(proxied.child, proxied.port, await bench.loginCookie(proxied.port))
    await stop(proxied.child)
    const bare = await bench.attempt('bare node:http pipe proxy', () => bench.startScript('bare node:http pipe proxy', 'pipe-proxy.mjs', [backend]))
    if (!bare) break
    const viaPipe = await streamMemory(bare.child, bare.port, 'none=1')
    await stop(bare.child)
    gateway.push(viaGateway.growth)
    pipe.push(viaPipe.growth)
    intact &&= viaGateway.intact && viaPipe.intact
  }
  const ratios = gateway.map((growth, i) => growth / pipe[i])
  return {
    checks: [{
      what: 'memory per stream: peak RSS growth, 100 uploads + 100 downloads of 32 MiB at once (25 slow readers), gateway with access log + metrics vs bare node:http pipe proxy',
      figure: ratios.length
        ? `${spread(ratios)}; gateway ${gateway.map(v => v.toFixed(0)).join(', ')} MiB, pipe proxy ${pipe.map(v => v.toFixed(0)).join(', ')} MiB; bytes ${intact ? 'all match (SHA-256)' : 'MISMATCH'}`
        : 'not measured: the pipe proxy failed',
      target: '≤ 1.25×', ok: ratios.length ? median(ratios) <= 1.25 && intact : undefined,
    }],
  }
}
