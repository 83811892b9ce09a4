// @ts-check
/** What the bench scripts share: pinning a process to a CPU, waiting for a port, stopping a process, wrk's figures. */
import { spawnSync } from 'node:child_process'
import { request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import { cpus } from 'node:os'

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
