import { spawn } from 'node:child_process'
import { connect } from 'node:net'
import { freePort } from './gateway'

export interface RunningRedis {
  port: number
  url: string
  /** Ends the server at once (SIGKILL: nothing is saved, as in a crash). */
  stop: () => Promise<void>
}

/**
 * A real redis-server (Debian package) on a free loopback port, without persistence; on `fixedPort` to start one again
 * where a stopped one was. A port taken meanwhile by another test file is chosen again.
 */
export async function startRedis(fixedPort?: number): Promise<RunningRedis> {
  for (let attempt = 1; ; attempt++) {
    const port = fixedPort ?? await freePort()
    const redis = await spawnRedis(port)
    if (redis) return redis
    if (fixedPort !== undefined || attempt === 5) throw new Error(`redis-server did not start on port ${port} (is the Debian package installed?)`)
  }
}

/** The server on `port` once it accepts connections, or undefined when it exited (its port was taken). */
async function spawnRedis(port: number): Promise<RunningRedis | undefined> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--enable-debug-command', 'local'], { stdio: 'ignore' })
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
  child.once('error', () => undefined) // no redis-server on PATH: seen as an exit below
  const deadline = Date.now() + 10_000
  // Ours once the server on the port says our process id (another file's server may hold a port we were given too).
  while (await redisProcessId(port) !== child.pid) {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return undefined
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      return undefined
    }
    await new Promise(resolve => setTimeout(resolve, 25))
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    },
  }
}

/** The process id the Redis server on a loopback port gives in INFO, or undefined when none answers. */
function redisProcessId(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    let text = ''
    const socket = connect(port, '127.0.0.1', () => socket.write('INFO server\r\n'))
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      text += chunk
      const pid = /process_id:(\d+)/.exec(text)?.[1]
      if (pid) {
        socket.destroy()
        resolve(Number(pid))
      }
    })
    socket.on('error', () => resolve(undefined))
    socket.on('close', () => resolve(undefined))
  })
}

/**
 * A test's own ioredis client. Its connection errors are expected (tests stop the server under it) and are not
 * reported: ioredis prints every error event nobody listens to.
 */
export async function redisClient(url: string, options: { lazyConnect?: boolean } = {}) {
  const { Redis } = await import('ioredis')
  const client = new Redis(url, { ...options, maxRetriesPerRequest: 1 })
  client.on('error', () => {})
  return client
}

/** Waits until `count` clients are connected to the Redis at `url` (the gateways have connected). */
export async function waitForClients(url: string, count: number, timeoutMs = 10_000): Promise<void> {
  const probe = await redisClient(url)
  try {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const info = await probe.info('clients')
      // The probe is a client too.
      if (Number(/connected_clients:(\d+)/.exec(info)?.[1] ?? 0) - 1 >= count) return
      if (Date.now() > deadline) throw new Error(`fewer than ${count} clients connected to ${url}`)
      await new Promise(resolve => setTimeout(resolve, 50))
    }
  }
  finally {
    probe.disconnect()
  }
}

/** Waits until an ioredis connection is ready. */
export function whenReady(client: { status: string, once: (event: 'ready', listener: () => void) => unknown }): Promise<void> {
  return client.status === 'ready' ? Promise.resolve() : new Promise(resolve => void client.once('ready', () => resolve()))
}
