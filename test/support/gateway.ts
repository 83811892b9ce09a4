import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { onTestFailed } from 'vitest'

export const SERVER_ENTRY = fileURLToPath(new URL('../../playground/.output/server/index.mjs', import.meta.url))
export const TEST_SECRET = 'integration-test-secret-0123456789abcdef'

/**
 * The lowest port of the kernel's ephemeral range (Linux: 32768), from which it picks a port for `listen(0)` and the
 * source port of every outgoing connection; 0 when unknown.
 */
const EPHEMERAL_LOW = (() => {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 0
  }
  catch {
    return 0
  }
})()

/** Listens on `port` at 127.0.0.1 (0: the kernel's pick) and closes again: the port it had, undefined when taken. */
function tryListen(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer()
    server.unref()
    server.once('error', () => resolve(undefined))
    server.listen(port, '127.0.0.1', () => {
      const bound = (server.address() as AddressInfo).port
      server.close(() => resolve(bound))
    })
  })
}

/** Where freePort's picks are marked for the other test workers (one file a port). */
const PICKED_DIR = join(tmpdir(), 'svc-auth-gateway-test-ports')
/** How long a pick stays marked: far longer than a server takes to listen on it, after which its listen guards it. */
const PICK_HELD_MS = 60_000

/**
 * Marks `port` as picked, for every test worker of the machine; false when another picked it in the last
 * PICK_HELD_MS. Two workers that both probe a port free before either server listens would otherwise share it (CI lost
 * a gateway to that once more, EADDRINUSE in oidc-step-up.test.ts, port 23853).
 */
function markPicked(port: number): boolean {
  mkdirSync(PICKED_DIR, { recursive: true })
  const file = join(PICKED_DIR, String(port))
  const marked = statSync(file, { throwIfNoEntry: false })
  if (marked && Date.now() - marked.mtimeMs < PICK_HELD_MS) return false
  if (marked) rmSync(file, { force: true })
  try {
    closeSync(openSync(file, 'wx'))
    return true
  }
  catch {
    return false // another worker marked it just now
  }
}

/**
 * A free loopback port for a server that starts a moment later (a gateway whose port the provider must know first). It
 * is chosen at random among the 12,000 ports below the kernel's ephemeral range, and checked free by a listen. A port
 * the kernel had picked itself could go, before the server listens on it, to another test file's outgoing connection as
 * its source port: CI once lost a gateway to that (EADDRINUSE in oidc-step-up.test.ts). Without that range known: the
 * kernel's pick.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; EPHEMERAL_LOW > 13_024 && attempt < 50; attempt++) {
    const port = await tryListen(EPHEMERAL_LOW - 1 - Math.floor(Math.random() * 12_000))
    if (port !== undefined && markPicked(port)) return port
  }
  const picked = await tryListen(0)
  if (picked === undefined) throw new Error('no free loopback port')
  return picked
}

export interface RunningGateway {
  url: string
  port: number
  /** Everything the process printed so far. */
  output: () => string
  /** What the process wrote to stderr so far. */
  stderr: () => string
  /** What the process wrote to stdout so far (its log lines). */
  stdout: () => string
  stop: () => Promise<void>
  process: ChildProcess
  logFormat: string
}

/**
 * Starts the built playground (`npm run build` first), or another built app's server `entry`, with the given APP_*
 * variables, on a free loopback port (or `fixedPort`: an address others were told in advance), and waits until it answers. A port taken between its choice and the gateway's
 * listen (another test file in parallel) is chosen again. `node`: another Node binary than the one running the tests.
 */
export async function startGateway(env: Record<string, string>, entry = SERVER_ENTRY, fixedPort?: number, node = process.execPath): Promise<RunningGateway> {
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first`)
  for (let attempt = 1; ; attempt++) {
    try {
      const gateway = await spawnGateway(env, entry, fixedPort ?? await freePort(), node)
      started.push(gateway)
      return gateway
    }
    catch (error) {
      if (!(error instanceof PortTaken) || attempt === 5 || fixedPort !== undefined) throw error
    }
  }
}

class PortTaken extends Error {}

async function spawnGateway(env: Record<string, string>, entry: string, port: number, node: string): Promise<RunningGateway> {
  const child = spawn(node, [entry], {
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: String(port), APP_SESSION_SECRET: TEST_SECRET, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  let stderr = ''
  let stdout = ''
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk
    stderr += chunk
  })
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk
    stdout += chunk
  })
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 20_000
  // Nitro says `Listening on …` once its own listen succeeded: a server that answers before that is another one.
  // A port taken meanwhile: the gateway logs EADDRINUSE and exits 1 (wait for neither: choose another port).
  while (!output.includes('Listening on ')) {
    if (output.includes('EADDRINUSE')) {
      child.kill('SIGKILL')
      throw new PortTaken(output)
    }
    if (child.exitCode !== null) throw new Error(`gateway exited (${child.exitCode}):\n${output}`)
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`gateway did not start:\n${output}`)
    }
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  await fetch(`${url}/healthz`)
  return {
    url,
    port,
    output: () => output,
    stderr: () => stderr,
    stdout: () => stdout,
    process: child,
    logFormat: env.APP_LOG_FORMAT ?? 'json',
    // SIGTERM (the graceful shutdown), and SIGKILL if it has not ended 15 s later.
    stop: () => new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      const stuck = setTimeout(() => child.kill('SIGKILL'), 15_000)
      child.once('exit', () => {
        clearTimeout(stuck)
        resolve()
      })
      child.kill('SIGTERM')
    }),
  }
}

/** Every gateway started by the current test file (see test/support/clean-output.ts). */
export const started: RunningGateway[] = []

/**
 * Lines of a gateway's output that show an uncaught exception or a stack trace; a JSON log line is read by the text
 * it carries (its message and every other field, split at line breaks).
 */
export function crashLines(output: string): string[] {
  const lines = output.split('\n').flatMap((line) => {
    const entry = parseLogLine(line)
    return entry ? Object.values(entry).flatMap(value => String(value).split('\n')) : [line]
  })
  return lines.filter(line => /^\s+at\s|Uncaught|unhandled|\b(TypeError|ReferenceError|RangeError|SyntaxError)\b/i.test(line))
}

/** One JSON log line as an object, or undefined when the line is not a JSON object. */
export function parseLogLine(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) return undefined
  try {
    const value = JSON.parse(line) as unknown
    return value && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : undefined
  }
  catch {
    return undefined
  }
}

/** The log lines of an output (stdout), every one parsed; a line that is not a JSON object throws, naming it. */
export function logEntries(stdout: string): Record<string, unknown>[] {
  return stdout.split('\n').filter(Boolean).map((line) => {
    const entry = parseLogLine(line)
    if (!entry) throw new Error(`not a JSON log line: ${line.slice(0, 300)}`)
    return entry
  })
}

/**
 * Prints the instances' warnings and errors (time, level, message and fields) when the test running it fails: what a
 * failover test's verdict alone cannot say, in the output CI keeps.
 */
export function printWarningsOnFailure(gateways: () => RunningGateway[]): void {
  onTestFailed(() => {
    for (const gateway of gateways()) {
      const entries = gateway.stdout().split('\n').map(parseLogLine).filter(entry => entry && ['warn', 'error', 'fatal'].includes(String(entry.level)))
      console.log(`${gateway.url}: ${entries.length} warnings and errors\n${entries.map(entry => JSON.stringify(entry)).join('\n')}`)
    }
  })
}

/**
 * Runs the built server with the given variables until it exits (for start-up failures). The kill after `timeoutMs`
 * is for a server that never exits, not for a slow machine: a start under a load of 25 took over 10 s.
 */
export function runGatewayToExit(env: Record<string, string>, timeoutMs = 45_000): Promise<{ code: number | null, output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SERVER_ENTRY], {
      env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    const collect = (chunk: Buffer) => {
      output += chunk
    }
    child.stdout.on('data', collect)
    child.stderr.on('data', collect)
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })
}

/** The Set-Cookie lines of a response. */
export function setCookies(response: Response): string[] {
  return response.headers.getSetCookie()
}

/** `name=value` of a Set-Cookie line, for replaying as a Cookie header. */
export function cookiePair(setCookie: string): string {
  return setCookie.split(';')[0]!
}

/** The Set-Cookie line of one cookie, or undefined. */
export function findSetCookie(response: Response, name: string): string | undefined {
  return setCookies(response).find(line => line.startsWith(`${name}=`))
}
