import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'

export const SERVER_ENTRY = fileURLToPath(new URL('../../playground/.output/server/index.mjs', import.meta.url))
export const TEST_SECRET = 'integration-test-secret-0123456789abcdef'

/** A free loopback port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

export interface RunningGateway {
  url: string
  port: number
  /** Everything the process printed so far. */
  output: () => string
  /** What the process wrote to stderr so far. */
  stderr: () => string
  stop: () => Promise<void>
  process: ChildProcess
}

/**
 * Starts the built playground (`npm run build` first), or another built app's server `entry`, with the given APP_*
 * variables, on a free loopback port, and waits until it answers.
 */
export async function startGateway(env: Record<string, string>, entry = SERVER_ENTRY): Promise<RunningGateway> {
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first`)
  const port = await freePort()
  const child = spawn(process.execPath, [entry], {
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: String(port), APP_SESSION_SECRET: TEST_SECRET, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  let stderr = ''
  const collect = (chunk: Buffer) => {
    output += chunk
  }
  child.stdout!.on('data', collect)
  child.stderr!.on('data', collect)
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk
  })
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 20_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gateway exited (${child.exitCode}):\n${output}`)
    try {
      await fetch(`${url}/auth/session`)
      break
    }
    catch {
      if (Date.now() > deadline) throw new Error(`gateway did not start:\n${output}`)
      await new Promise(resolve => setTimeout(resolve, 100))
    }
  }
  const gateway: RunningGateway = {
    url,
    port,
    output: () => output,
    stderr: () => stderr,
    process: child,
    stop: () => new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      child.once('exit', () => resolve())
      child.kill('SIGTERM')
    }),
  }
  started.push(gateway)
  return gateway
}

/** Every gateway started by the current test file (see test/helpers/clean-stderr.ts). */
export const started: RunningGateway[] = []

/** Lines of a gateway's stderr that show an uncaught exception or a stack trace. */
export function crashLines(stderr: string): string[] {
  return stderr.split('\n').filter(line => /^\s+at\s|Uncaught|unhandled|\b(TypeError|ReferenceError|RangeError|SyntaxError)\b/i.test(line))
}

/** Runs the built server with the given variables until it exits (for start-up failures). */
export function runGatewayToExit(env: Record<string, string>, timeoutMs = 10_000): Promise<{ code: number | null, output: string }> {
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
