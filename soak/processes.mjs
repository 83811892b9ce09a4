// @ts-check
/**
 * The soak's child processes: a redis-server that can crash and come back with its data or without it, and gateway
 * instances of the built playground that can be stopped with SIGTERM and started again on the same ports. Each
 * process writes its output straight to a file of the report folder (nothing passes through the soak's own loop).
 */
import { spawn } from 'node:child_process'
import { closeSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'

const sleep = (/** @type {number} */ ms) => new Promise(resolve => setTimeout(resolve, ms))

/** Whether something answers PONG on a loopback Redis port. */
function redisAnswers(/** @type {number} */ port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('PING\r\n'))
    socket.setTimeout(500, () => socket.destroy())
    socket.once('data', (chunk) => {
      socket.destroy()
      resolve(String(chunk).startsWith('+PONG'))
    })
    socket.once('error', () => resolve(false))
    socket.once('close', () => resolve(false))
  })
}

/**
 * A redis-server on `port` keeping its data in `dir` (append-only file, synced on every write, so a crash loses
 * nothing): `crash()` kills it (SIGKILL), `start({ empty })` starts it again, with its data or after removing it.
 * @param {{ port: number, dir: string }} options
 */
export async function startRedis({ port, dir }) {
  /** @type {import('node:child_process').ChildProcess | undefined} */
  let child
  const start = async ({ empty = false } = {}) => {
    if (empty) rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir, { recursive: true })
    child = spawn('redis-server', [
      '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes',
      '--appendfsync', 'always', '--logfile', join(dir, '..', 'redis.log'),
    ], { stdio: 'ignore' })
    child.once('error', () => {})
    const deadline = Date.now() + 10_000
    while (!(await redisAnswers(port))) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start on port ${port} (is the Debian package installed?)`)
      await sleep(50)
    }
  }
  const crash = async () => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise(resolve => child?.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
  }
  await start()
  return { url: `redis://127.0.0.1:${port}`, port, start, crash, stop: crash }
}

/**
 * One gateway instance: the built server `entry` on `port`, its metrics on `metricsPort`, with `env`. Each start is
 * a new process with its own log files (`<name>.<n>.log` for stdout, `<name>.<n>.err.log` for stderr) in `logDir`.
 * @param {{ name: string, entry: string, port: number, metricsPort: number, env: Record<string, string>, logDir: string }} options
 */
export function gatewayInstance({ name, entry, port, metricsPort, env, logDir }) {
  /** @type {import('node:child_process').ChildProcess | undefined} */
  let child
  /** @type {{ pid: number, stdout: string, stderr: string, startedAt: number, exitCode?: number | null }[]} */
  const runs = []
  const url = `http://127.0.0.1:${port}`

  /** Starts a new process and waits until its /readyz answers 200 (Redis connected, revocations followed). */
  async function start() {
    const n = runs.length + 1
    const stdout = join(logDir, `${name}.${n}.log`)
    const stderr = join(logDir, `${name}.${n}.err.log`)
    const [out, err] = [openSync(stdout, 'w'), openSync(stderr, 'w')]
    child = spawn(process.execPath, [entry], {
      // NODE_OPTIONS reaches the gateways as it would in production (an operator's agent, a --require'd probe).
      env: { PATH: process.env.PATH, ...(process.env.NODE_OPTIONS ? { NODE_OPTIONS: process.env.NODE_OPTIONS } : {}), HOST: '127.0.0.1', PORT: String(port), APP_METRICS_PORT: String(metricsPort), ...env },
      stdio: ['ignore', out, err],
    })
    closeSync(out)
    closeSync(err)
    const run = { pid: child.pid ?? 0, stdout, stderr, startedAt: Date.now() }
    runs.push(run)
    const started = child
    started.once('exit', (code) => {
      run.exitCode = code
    })
    const deadline = Date.now() + 30_000
    while (!(await fetch(`${url}/readyz`).then(r => r.ok, () => false))) {
      if (started.exitCode !== null) throw new Error(`gateway ${name} exited (${started.exitCode}): ${readFileSync(stderr, 'utf8').slice(-500)}`)
      if (Date.now() > deadline) throw new Error(`gateway ${name} was not ready within 30 s`)
      await sleep(100)
    }
  }

  /** SIGTERM, and waits for the exit (SIGKILL after `graceMs`); resolves with the exit code. */
  async function stop(graceMs = 40_000) {
    const running = child
    if (!running || running.exitCode !== null || running.signalCode !== null) return running?.exitCode ?? null
    const exited = new Promise(resolve => running.once('exit', code => resolve(code)))
    running.kill('SIGTERM')
    const stuck = setTimeout(() => running.kill('SIGKILL'), graceMs)
    const code = await exited
    clearTimeout(stuck)
    return /** @type {number | null} */ (code)
  }

  return {
    name,
    url,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    /** The process serving now (undefined while none runs). */
    pid: () => (child && child.exitCode === null && child.signalCode === null ? child.pid : undefined),
    /** Every process this instance ran, oldest first, with its log files and exit code. */
    runs,
    start,
    stop,
  }
}
