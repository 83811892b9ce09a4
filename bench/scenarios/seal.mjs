// @ts-check
/**
 * Seal and unseal on the real modules (server/core, bundled with esbuild into bench/.tmp), timed in a child process of
 * their own on CPU 1: unseal, seal, a cookie the cache has seen, and the revocation check against 10,000 held (its
 * time goes into the throughput scenario's revocation line). Run as `node bench/scenarios/seal.mjs BUNDLE` it is that
 * child: it times and prints the figures as JSON.
 */
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { pin } from '../processes.mjs'
import { root, tmp } from '../setup.mjs'

/** Times the bundle's functions; the figures in µs (revokedNs in ns). */
async function measure(bundle) {
  const { RevocationSet, SessionCache, deriveSealKeys, sealSession, unsealSession } = await import(pathToFileURL(bundle).href)
  const keys = deriveSealKeys([randomBytes(32).toString('hex')], false)
  const payload = { user: { id: 'u', name: 'Người dùng', email: 'u@x.vn', roles: ['admin'], permissions: ['/orders/search', '/orders/create'] }, accessToken: 't'.repeat(2400), expiresAt: Date.now() + 3_600_000, iat: Date.now(), sid: 'AAAAAAAAAAAAAAAA' }
  const sealed = sealSession(payload, keys)
  // A payload that does not open would time the refusal path: a figure that lies.
  if (!unsealSession(sealed, keys)) throw new Error('the bench payload does not open: fix it to match SessionPayload')
  const time = (fn, n) => {
    for (let i = 0; i < 2_000; i++) fn()
    const start = process.hrtime.bigint()
    for (let i = 0; i < n; i++) fn()
    return Number(process.hrtime.bigint() - start) / n / 1000
  }
  const cache = new SessionCache(keys)
  const revoked = new RevocationSet()
  for (let i = 0; i < 10_000; i++) revoked.add({ kind: 'session', sid: randomBytes(12).toString('base64url'), userId: `u-${i}`, iat: Date.now() })
  const opened = cache.open(sealed)
  return {
    revokedNs: time(() => revoked.isRevoked(opened), 1_000_000) * 1000,
    unsealUs: time(() => unsealSession(sealed, keys), 50_000),
    cachedUs: time(() => cache.open(sealed), 50_000),
    sealUs: time(() => sealSession(payload, keys), 50_000),
    cookieBytes: sealed.length,
  }
}

/** @param {import('../setup.mjs').Bench} bench */
export async function run(bench) {
  const { build } = await import('esbuild')
  const bundle = `${tmp}session-cache.mjs`
  await build({
    stdin: { contents: 'export * from "./server/core/seal"; export * from "./server/core/session-cache"; export * from "./server/core/revocations"', resolveDir: root, loader: 'ts' },
    bundle: true, platform: 'node', format: 'esm', outfile: bundle, logLevel: 'silent',
  })
  const [bin, argv] = pin(1, process.execPath, [fileURLToPath(import.meta.url), bundle])
  const figures = JSON.parse(execFileSync(bin, argv, { encoding: 'utf8' }))
  bench.results.seal = figures
  return {
    checks: [{
      what: `unseal / seal (2.4 KB token, ${figures.cookieBytes}-byte cookie value)`,
      figure: `${figures.unsealUs.toFixed(1)} µs / ${figures.sealUs.toFixed(1)} µs; a seen cookie ${figures.cachedUs.toFixed(2)} µs`,
      target: 'unseal ≤ ~15 µs', ok: figures.unsealUs <= 15,
    }],
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(JSON.stringify(await measure(process.argv[2])))
  process.exit(0) // the bundle's timers, if any, must not hold the answer back
}
