import { once } from 'node:events'
import { Agent, request } from 'node:http'
import type { Socket } from 'node:net'
import { describe, expect, it } from 'vitest'
import { keepAliveAgent } from '../../soak/client.mjs'
import { logEntries, type RunningGateway } from '../support/gateway'
import { rawConnection } from '../support/raw-http'
import { useStack } from '../support/stack'
import { tcpState } from '../support/tcp'

const stack = useStack({ iam: false, backend: 'none' })
const MOCK = { APP_AUTH_MOCK: 'true' }

interface Sent {
  status?: number
  keepAlive?: string
  error?: string
  /** The request went on a kept-alive connection. */
  reused: boolean
  socket?: Socket
}

/** One GET through a Node agent: the answer (its socket kept for the test), or the error's code. */
function get(gateway: RunningGateway, path: string, agent: Agent): Promise<Sent> {
  return new Promise((resolve) => {
    const req = request(`${gateway.url}${path}`, { agent }, (res) => {
      const socket = res.socket
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode, keepAlive: res.headers['keep-alive'], reused: req.reusedSocket, socket }))
    })
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message, reused: req.reusedSocket }))
    req.end()
  })
}

describe('keep-alive connections from clients', () => {
  it('are kept APP_KEEP_ALIVE_TIMEOUT seconds, 65 by default (past the 60 s of nginx and AWS load balancers), as every answer says', async () => {
    const gateway = await stack.bareGateway(MOCK)
    expect(logEntries(gateway.stdout()).find(entry => entry.type === 'server')).toMatchObject({ keepAliveTimeout: 65_000 })
    const short = await stack.bareGateway({ ...MOCK, APP_KEEP_ALIVE_TIMEOUT: '1' })
    for (const [server, seconds] of [[gateway, 65], [short, 1]] as const) {
      const { socket, received } = rawConnection(server.port)
      socket.write('GET /healthz HTTP/1.1\r\nHost: gateway.test\r\n\r\n')
      await expect.poll(received).toMatch(/\{"status":"ok"\}$/)
      expect(received()).toMatch(new RegExp(`^HTTP/1\\.1 200 OK\\r\\n(.+\\r\\n)*Keep-Alive: timeout=${seconds}\\r\\n`))
      socket.destroy()
    }
    // The short one closes an idle connection itself, never before the time it announced.
    const { socket, received } = rawConnection(short.port)
    socket.write('GET /healthz HTTP/1.1\r\nHost: gateway.test\r\n\r\n')
    await expect.poll(received).toMatch(/\{"status":"ok"\}$/)
    const answered = Date.now()
    await once(socket, 'end')
    expect(Date.now() - answered).toBeGreaterThanOrEqual(1_000)
  })

  it('race with a client that keeps them past the announced time (ECONNRESET), never with one that heeds Keep-Alive', async () => {
    const gateway = await stack.bareGateway({ ...MOCK, APP_KEEP_ALIVE_TIMEOUT: '2' })

    // The race on demand. A Node agent without a timeout of its own ignores `Keep-Alive: timeout=2` and keeps the
    // connection; the client is busy (its event loop does not turn) while the gateway closes it, so the agent never
    // sees the close and sends the next request on it: the gateway's side answers with a reset.
    const careless = new Agent({ keepAlive: true })
    const first = await get(gateway, '/auth/session', careless)
    expect(first).toMatchObject({ status: 200, keepAlive: 'timeout=2', reused: false })
    const localPort = first.socket!.localPort!
    const deadline = Date.now() + 30_000
    while (tcpState(localPort, gateway.port) === '01' && Date.now() < deadline) {
      // busy, as the soak's client is while it hashes a stream: '08' (CLOSE_WAIT) once the gateway's FIN is in
    }
    expect(tcpState(localPort, gateway.port)).toBe('08')
    expect(await get(gateway, '/auth/logout', careless)).toMatchObject({ error: 'ECONNRESET', reused: true })
    careless.destroy()

    // The soak's agent heeds the announced time: it drops the idle connection itself (1 s before), so the gateway
    // never closes one under it, and the next request opens a new connection.
    const heeding = keepAliveAgent()
    const kept = await get(gateway, '/auth/session', heeding)
    expect(kept).toMatchObject({ status: 200, reused: false })
    let closedByGateway = false
    kept.socket!.once('end', () => closedByGateway = true)
    await once(kept.socket!, 'close')
    expect(closedByGateway).toBe(false)
    expect(await get(gateway, '/auth/logout', heeding)).toMatchObject({ status: 302, reused: false })
    heeding.destroy()
  })
})
