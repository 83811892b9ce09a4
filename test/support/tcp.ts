import { readFileSync } from 'node:fs'
import type { Socket } from 'node:net'

/** One row of /proc/net/tcp (IPv4 connections): its ports, state and queues. */
interface TcpRow {
  localPort: number
  remotePort: number
  /** '01' established, '06' TIME_WAIT, '08' CLOSE_WAIT (the other side's FIN has arrived), ... */
  state: string
  /** Bytes sent and not yet acknowledged. */
  sendQueue: number
  /** Bytes received and not yet read by the process. */
  receiveQueue: number
}

/** The kernel's IPv4 TCP connections (Linux), read without letting the event loop turn. */
function tcpRows(): TcpRow[] {
  return readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1).filter(Boolean).map((line) => {
    const [, local, remote, state, queues] = line.trim().split(/\s+/)
    const [sendQueue, receiveQueue] = queues!.split(':').map(hex => Number.parseInt(hex, 16))
    const port = (address: string) => Number.parseInt(address.split(':')[1]!, 16)
    return { localPort: port(local!), remotePort: port(remote!), state: state!, sendQueue: sendQueue!, receiveQueue: receiveQueue! }
  })
}

/**
 * The kernel's state of our side of a loopback connection from `localPort` to `remotePort` (see TcpRow), undefined
 * once it is gone.
 */
export function tcpState(localPort: number, remotePort: number): string | undefined {
  return tcpRows().find(row => row.localPort === localPort && row.remotePort === remotePort)?.state
}

/**
 * Resolves once the process at the other end of a loopback connection has read everything `socket` wrote (our send
 * queue and its receive queue both empty): the bytes are then that process's, with no sleep that assumes it.
 */
export async function readByPeer(socket: Socket, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const rows = tcpRows()
    const ours = rows.find(row => row.localPort === socket.localPort && row.remotePort === socket.remotePort)
    const theirs = rows.find(row => row.localPort === socket.remotePort && row.remotePort === socket.localPort)
    if (socket.writableLength === 0 && ours?.sendQueue === 0 && theirs?.receiveQueue === 0) return
    if (Date.now() > deadline) throw new Error(`the other end did not read what was sent within ${timeoutMs} ms`)
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}
