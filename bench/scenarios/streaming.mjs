// @ts-check
/**
 * Streaming through a fresh gateway to the Node backend: 1 GiB up, 1 GiB down, then 128 MiB down to a reader that
 * pauses 1 ms after every chunk; the growth of its peak resident size (VmHWM) over the size after a 1 MiB warm-up, and
 * every byte checked (size and SHA-256).
 */
import { patternSha256 } from '../../dev/pattern.mjs'
import { download, memoryMiB, stop, upload } from '../processes.mjs'

const GiB = 1024 * 1024 * 1024
const SLOW_BYTES = 128 * 1024 * 1024

/** @param {import('../setup.mjs').Bench} bench */
export async function run(bench) {
  const gateway = await bench.startGateway('stream gateway', { APP_API_PROXY_TARGET: await bench.backend() }, 'stream-gateway')
  const cookie = await bench.loginCookie(gateway.port)
  await download(gateway.port, cookie, 1024 * 1024)
  const pid = gateway.child.pid ?? 0
  const baseline = memoryMiB(pid)
  const up = await upload(gateway.port, cookie, GiB)
  const down = await download(gateway.port, cookie, GiB)
  const slow = await download(gateway.port, cookie, SLOW_BYTES, 1)
  const growth = memoryMiB(pid) - baseline
  await stop(gateway.child)
  const intact = up.bytes === GiB && up.sha256 === patternSha256(GiB) && down.bytes === GiB && down.sha256 === patternSha256(GiB) && slow.bytes === SLOW_BYTES && slow.sha256 === patternSha256(SLOW_BYTES)
  return {
    checks: [{
      what: 'streaming peak RSS growth (1 GiB up, 1 GiB down, 128 MiB slow reader)',
      figure: `${growth.toFixed(1)} MiB over ${baseline.toFixed(1)} MiB; bytes ${intact ? 'all match (SHA-256)' : 'MISMATCH'}`,
      target: '< 48 MiB', ok: growth < 48 && intact,
    }],
  }
}
