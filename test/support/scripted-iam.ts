import { createServer } from 'node:net'
import type { AddressInfo, Socket } from 'node:net'

/**
 * An IAM that answers every request with raw HTTP bytes the test chooses (statuses Node's own server refuses to
 * send, such as 700), after reading the request's headers and declared body.
 */
export async function startScriptedIam() {
  let answer = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}'
  let calls = 0
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    // A gateway that stops reading an answer (too large) resets the connection: nothing to report.
    socket.on('error', () => socket.destroy())
    let buffered = Buffer.alloc(0)
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk])
      const end = buffered.indexOf('\r\n\r\n')
      if (end === -1) return
      const length = Number(/content-length:\s*(\d+)/i.exec(buffered.subarray(0, end).toString())?.[1] ?? 0)
      if (buffered.length < end + 4 + length) return
      buffered = buffered.subarray(end + 4 + length)
      calls++
      socket.end(answer)
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Sets the raw answer; `json` bodies get their content-length. */
    answer(status: string, body: string, type = 'application/json') {
      answer = `HTTP/1.1 ${status}\r\ncontent-type: ${type}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
    },
    calls: () => calls,
    close: () => {
      for (const socket of sockets) socket.destroy()
      return new Promise<void>(resolve => server.close(() => resolve()))
    },
  }
}
