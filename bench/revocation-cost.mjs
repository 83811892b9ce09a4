// @ts-check
/**
 * The proxy with 10,000 revocations held against none (with Redis holding none, and without Redis): 7 interleaved
 * rounds of 3 s, wrk and Redis on CPU 1, the gateways on CPU 0, medians printed. By hand, after `npm run build`:
 * `node bench/revocation-cost.mjs`. (`npm run bench` has the same line; this one interleaves more rounds.)
 */
import { execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { freePort } from './processes.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const SECRET = randomBytes(32).toString('hex')
const children = []
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))
const onCpu = (cpu, command, args, options = {}) => {
  const child = spawn('taskset', ['-c', String(cpu), command, ...args], { stdio: 'ignore', ...options })
  children.push(child)
  return child
}

try {
  const [full, empty, backend] = [await freePort(), await freePort(), await freePort()]
  onCpu(1, 'redis-server', ['--port', String(full), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'])
  onCpu(1, 'redis-server', ['--port', String(empty), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'])
  onCpu(1, process.execPath, [`${root}bench/backend.mjs`, String(backend)])
  await sleep(500)
  const client = new Redis(`redis://127.0.0.1:${full}`)
  const batch = client.pipeline()
  for (let i = 0; i < 10_000; i++) {
    const sid = randomBytes(12).toString('base64url')
    batch.set(`svc:rev:s:${sid}`, JSON.stringify({ kind: 'session', sid, userId: `u-${i}`, iat: Date.now() }), 'PX', 8 * 3_600_000)
  }
  await batch.exec()
  client.disconnect()
  const env = { ...process.env, HOST: '127.0.0.1', APP_SESSION_SECRET: SECRET, APP_AUTH_MOCK: 'true', APP_API_PROXY_TARGET: `http://127.0.0.1:${backend}` }
  const gateways = {
    'no Redis': { port: await freePort(), env: {} },
    'Redis, 0 revocations': { port: await freePort(), env: { APP_REDIS_URL: `redis://127.0.0.1:${empty}` } },
    'Redis, 10,000 revocations': { port: await freePort(), env: { APP_REDIS_URL: `redis://127.0.0.1:${full}` } },
  }
  for (const { port, env: extra } of Object.values(gateways)) {
    onCpu(0, process.execPath, [`${root}playground/.output/server/index.mjs`], { env: { ...env, ...extra, PORT: String(port) } })
  }
  await sleep(3_000)
  const login = await fetch(`http://127.0.0.1:${gateways['no Redis'].port}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"username":"a","password":"b"}' })
  const cookie = login.headers.getSetCookie().map(line => line.split(';')[0]).join('; ')
  /** @type {Record<string, number[]>} */
  const rates = {}
  for (let round = 0; round < 7; round++) {
    for (const [name, { port }] of Object.entries(gateways)) {
      const out = execFileSync('taskset', ['-c', '1', 'wrk', '-t1', '-c32', '-d3s', '-H', `cookie: ${cookie}`, `http://127.0.0.1:${port}/api/ping`], { encoding: 'utf8' })
      ;(rates[name] ??= []).push(Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0))
    }
  }
  const median = list => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]
  for (const [name, list] of Object.entries(rates)) console.log(`${name}: median ${Math.round(median(list))} req/s (${list.map(Math.round).join(', ')})`)
}
finally {
  for (const child of children) child.kill('SIGKILL')
}
