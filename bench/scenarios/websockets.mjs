// @ts-check
/**
 * WebSocket echoes (bench/ws-load.mjs: 32 connections, each keeping 16 messages of 32 bytes in flight) to one echo
 * server (bench/ws-echo.mjs), reached directly and through a gateway, in interleaved rounds. As for the HTTP rows, the
 * echo server runs beside the load generator (CPU 1), so that the gateway's own cost decides.
 */
import { ROUNDS, median, spread, wsLoad } from '../load.mjs'

/** @param {import('../setup.mjs').Bench} bench */
export async function run(bench) {
  const echo = await bench.startScript('WebSocket echo', 'ws-echo.mjs', [], 1)
  const gateway = await bench.startGateway('gateway for WebSockets', { APP_API_PROXY_TARGET: echo.url }, 'ws-gateway')
  const rates = { direct: /** @type {number[]} */ ([]), gateway: /** @type {number[]} */ ([]) }
  for (let round = 0; round < ROUNDS; round++) {
    rates.direct.push(wsLoad(`ws://127.0.0.1:${echo.port}/live`))
    rates.gateway.push(wsLoad(`ws://127.0.0.1:${gateway.port}/api/live`))
  }
  const ratios = rates.gateway.map((rate, i) => rate / rates.direct[i])
  return {
    checks: [{
      what: 'WebSocket echoes (32 connections × 16 in flight, 32 bytes) through the gateway vs direct',
      figure: `${spread(ratios)}; ${Math.round(median(rates.gateway))} vs ${Math.round(median(rates.direct))} messages/s`,
      target: '≥ 0.5×', ok: median(ratios) >= 0.5,
    }],
  }
}
