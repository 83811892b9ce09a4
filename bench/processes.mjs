// @ts-check
/**
 * What the bench scripts share: a free port from the OS, pinning a process to a CPU, waiting for a port, stopping a
 * process, wrk's figures, streaming pattern bytes through a proxy to bench/backend.mjs and a process's memory figures.
 */
import { spawn, spawnSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { connect, createServer } from 'node:net'
import { cpus } from 'node:os'
import { patternChunk, patternSha256 } from '../dev/pattern.mjs'

/** Ports handed out by freePort in this process: never handed out twice. */
const handedOut = new Set()

/**
 * A free TCP port on 127.0.0.1, taken from the OS: listens on port 0, reads the port, closes, hands it on (never the
 * same one twice in a process). Another process could take it in between; the server that gets it fails to start and
 * says so.
 */
export async function freePort() {
  for (;;) {
    const port = await new Promise((resolve, reject) => {
      const server = createServer()
      server.once('error', reject)
      server.listen(0, '127.0.0.1', () => {
        const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
        server.close(() => resolve(port))
      })
    })
    if (!handedOut.has(port)) {
      handedOut.add(port)
      return port
    }
  }
}

/** Whether a command is on PATH. */
export function has(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`]).status === 0
}

/** A command and its arguments run on one CPU (taskset), when the machine has more than one and taskset is there. */
export const pin = (cpu, command, args) => (has('taskset') && cpus().length > 1 ? ['taskset', ['-c', String(cpu), command, ...args]] : [command, args])

/** Stops a process (SIGTERM, then SIGKILL) and waits for it. */
export async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise(resolve => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
  await exited
  clearTimeout(timer)
}

/** Waits until something accepts TCP connections on a loopback port (a server that does not speak HTTP). */
export async function waitForTcp(port) {
  const deadline = Date.now() + 10_000
  while (!(await new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.end()
      resolve(true)
    })
    socket.on('error', () => resolve(false))
  }))) {
    if (Date.now() > deadline) throw new Error(`nothing listens on port ${port}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

/** Milliseconds from a wrk latency figure ('812.00us', '2.41ms', '1.02s'). */
export function wrkMs(text) {
  const [, value, unit] = /([\d.]+)(us|ms|s)/.exec(text) ?? [null, '0', 'ms']
  return Number(value) * (unit === 'us' ? 0.001 : unit === 's' ? 1000 : 1)
}

/**
 * Waits until a started server answers HTTP on a loopback port (any status); fails when the process exits first or
 * after `seconds`, saying the last lines `errors()` gives (its stderr).
 */
export async function waitForHttp(child, name, port, errors, seconds = 20) {
  const deadline = Date.now() + seconds * 1000
  const last = () => errors().trim().split('\n').slice(-3).join(' ')
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited: ${last()}`)
    const up = await new Promise((resolve) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/', method: 'HEAD' }, (res) => {
        res.resume()
        resolve(true)
      })
      req.on('error', () => resolve(false))
      req.end()
    })
    if (up) return
    if (Date.now() > deadline) throw new Error(`${name} did not start within ${seconds} s: ${last()}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

/** A memory figure of a process from /proc (VmHWM: peak resident set; VmRSS: resident now), in MiB. */
export function memoryMiB(pid, field = 'VmHWM') {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024
}

/**
 * The CPU time a process has used (user + system, /proc/PID/stat), in clock ticks: compared before and after a run, it
 * says what the process spent, whatever share of the CPU the rest of the machine left it.
 */
export function cpuTicks(pid) {
  // The fields after the command's name, which may hold spaces and ends at the last ')': utime and stime are 12 and 13.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[11]) + Number(fields[12])
}

/**
 * Streams `bytes` of the pattern up through a proxy on `port` to the backend's /api/sink; resolves with what the
 * backend counted ({ bytes, sha256 }), rejects when the answer is not that (a proxy's error page, say).
 */
export function upload(port, cookie, bytes) {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/api/sink', method: 'POST', headers: { cookie, 'content-type': 'application/octet-stream', 'content-length': bytes } }, (res) => {
      let body = ''
      res.on('data', (chunk) => {
        body += chunk
      })
      res.on('end', () => {
        try {
          resolve(JSON.parse(body))
        }
        catch {
          reject(new Error(`upload of ${bytes} bytes: ${res.statusCode} ${body.slice(0, 200)}`))
        }
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    let index = 0
    let sent = 0
    const pump = () => {
      while (sent < bytes) {
        const chunk = patternChunk(index++)
        sent += chunk.length
        if (!req.write(chunk)) return void req.once('drain', pump)
      }
      req.end()
    }
    pump()
  })
}

/**
 * Downloads `bytes` of the pattern through a proxy on `port` from the backend's /api/stream, optionally pausing
 * `delayMs` after each chunk (a slow reader); resolves with the size and SHA-256 of what arrived.
 */
export function download(port, cookie, bytes, delayMs = 0) {
  return new Promise((resolve, reject) => {
    httpRequest({ host: '127.0.0.1', port, path: `/api/stream?bytes=${bytes}`, headers: { cookie } }, (res) => {
      const hash = createHash('sha256')
      let received = 0
      res.on('data', (chunk) => {
        hash.update(chunk)
        received += chunk.length
        if (delayMs) {
          res.pause()
          setTimeout(() => res.resume(), delayMs)
        }
      })
      res.on('end', () => resolve({ bytes: received, sha256: hash.digest('hex') }))
      res.on('error', reject)
    }).on('error', reject).end()
  })
}

/**
 * Memory per stream: `streams` uploads and as many downloads of 32 MiB at once through one fresh proxy (`proxy`, the
 * process, on `port`), a quarter of the readers pausing 1 ms after every chunk, after a warm-up of one 1 MiB download
 * and one 1 MiB upload. Resolves with the proxy's resident size after the warm-up (`before`, VmRSS), its peak (VmHWM),
 * the growth (peak − before, MiB), and whether every byte arrived (size and SHA-256 of each transfer; `broken` counts
 * the transfers that did not).
 */
export async function streamMemory(proxy, port, cookie, streams = 100) {
  const MiB = 1024 * 1024
  const size = 32 * MiB
  await download(port, cookie, MiB)
  await upload(port, cookie, MiB)
  const before = memoryMiB(proxy.pid, 'VmRSS')
  const expected = patternSha256(size)
  const [ups, downs] = await Promise.all([
    Promise.all(Array.from({ length: streams }, () => upload(port, cookie, size))),
    Promise.all(Array.from({ length: streams }, (_, i) => download(port, cookie, size, i % 4 === 0 ? 1 : 0))),
  ])
  const peak = memoryMiB(proxy.pid)
  const broken = [...ups, ...downs].filter(result => result.bytes !== size || result.sha256 !== expected).length
  return { growth: peak - before, before, peak, intact: broken === 0, broken }
}

/**
 * A redis-server on CPU 1 (no persistence), loopback only on a free port, holding `revocations` live session
 * revocations as the gateway writes them (loaded by a shipped gateway at start: its checks then run against a full
 * set). The process is pushed onto `children` for the caller to stop. Resolves with its `redis://` URL.
 */
export async function startRevocationRedis(children, revocations = 10_000) {
  const port = await freePort()
  const [bin, argv] = pin(1, 'redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'])
  children.push(spawn(bin, argv, { stdio: 'ignore' }))
  await waitForTcp(port)
  const { Redis } = await import('ioredis')
  const client = new Redis(`redis://127.0.0.1:${port}`)
  const batch = client.pipeline()
  for (let i = 0; i < revocations; i++) {
    const sid = randomBytes(12).toString('base64url')
    batch.set(`svc:rev:s:${sid}`, JSON.stringify({ kind: 'session', sid, userId: `u-bench-${i}`, iat: Date.now() }), 'PX', 8 * 3_600_000)
  }
  await batch.exec()
  client.disconnect()
  return `redis://127.0.0.1:${port}`
}
