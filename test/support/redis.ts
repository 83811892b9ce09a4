import { spawn } from 'node:child_process'
import { connect } from 'node:net'
import { freePort } from './gateway'

/** A real redis-server (Debian package) on a free loopback port (or the given one, to restart it), without persistence. */
export async function startRedis(fixedPort?: number) {
  const port = fixedPort ?? await freePort()
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--enable-debug-command', 'local'], { stdio: 'ignore' })
  const deadline = Date.now() + 10_000
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.end()
        resolve(true)
      })
      socket.on('error', () => resolve(false))
    })
    if (up) break
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('redis-server did not start (is the Debian package installed?)')
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      child.once('exit', () => resolve())
      child.kill('SIGKILL')
    }),
  }
}

/** Waits until `count` clients are connected to the Redis at `url` (the gateways have connected). */
export async function waitForClients(url: string, count: number, timeoutMs = 10_000): Promise<void> {
  const { Redis } = await import('ioredis')
  const probe = new Redis(url)
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
