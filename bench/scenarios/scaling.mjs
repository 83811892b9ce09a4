// @ts-check
/**
 * One gateway process (CPU 0) against two (CPU 0 and CPU 1), the same wrk -c32 split over both. On a 2-core machine the
 * second process shares CPU 1 with wrk and the backend: the figure is what a second core is worth there, no target.
 */
import { ROUNDS, load, median, spread } from '../load.mjs'
import { stop } from '../processes.mjs'

/** @param {import('../setup.mjs').Bench} bench */
export async function run(bench) {
  const first = await bench.bareGateway()
  const cookie = await bench.cookie()
  const second = await bench.attempt('second gateway process', () => bench.startGateway('second gateway process', {}, 'second-gateway', 1))
  const one = []
  const two = []
  if (second) {
    const both = () => Promise.all([load(`${first.url}/api/ping`, { cookie }, 16), load(`${second.url}/api/ping`, { cookie }, 16)])
    await both() // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      one.push((await load(`${first.url}/api/ping`, { cookie })).rps)
      two.push((await both()).reduce((sum, run) => sum + run.rps, 0))
    }
    await stop(second.child)
  }
  const ratios = two.map((rate, i) => rate / one[i])
  return {
    checks: [{
      what: 'two gateway processes vs one (same -c32; the second process shares CPU 1 with wrk and the backend)',
      figure: ratios.length ? `${spread(ratios)}; ${Math.round(median(two))} vs ${Math.round(median(one))} req/s` : 'not measured: the second process failed',
      target: 'shown (no target on 2 cores)', ok: ratios.length ? true : undefined,
    }],
  }
}
