import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { serveAheadOfNitro } from '../../server/utils/ahead-of-nitro'

const servers: Server[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map(server => new Promise(resolve => server.close(resolve))))
})

/** A real server whose one 'request' listener stands for Nitro's: it answers `nitro <url>`. */
async function serverLikeNitro(): Promise<{ server: Server, get: (path: string) => Promise<string> }> {
  const server = createServer((req, res) => res.end(`nitro ${req.url}`))
  servers.push(server)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { server, get: async path => (await fetch(`http://127.0.0.1:${port}${path}`)).text() }
}

/** Answers /fast itself, leaves everything else. */
function fastPath(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.url !== '/fast') return false
  res.end('ahead')
  return true
}

describe('serveAheadOfNitro', () => {
  it('answers what it serves ahead of Nitro\'s listener, and leaves every other request to it', async () => {
    const { server, get } = await serverLikeNitro()
    serveAheadOfNitro(server, fastPath)
    expect(await get('/fast')).toBe('ahead')
    expect(await get('/page')).toBe('nitro /page')
    expect(server.listeners('request')).toHaveLength(1)
  })

  it('takes a server once: a second call changes nothing', async () => {
    const { server, get } = await serverLikeNitro()
    serveAheadOfNitro(server, fastPath)
    serveAheadOfNitro(server, () => {
      throw new Error('never called')
    })
    expect(await get('/fast')).toBe('ahead')
    expect(await get('/other')).toBe('nitro /other')
  })

  it('leaves a server with another \'request\' listener (an app\'s own) as it is', async () => {
    const { server, get } = await serverLikeNitro()
    const seen: string[] = []
    server.on('request', (req: IncomingMessage) => seen.push(req.url ?? ''))
    serveAheadOfNitro(server, fastPath)
    expect(await get('/fast')).toBe('nitro /fast')
    expect(seen).toEqual(['/fast'])
  })
})
