import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { lineDestination } from '../../server/ops/log-destination'

const dir = mkdtempSync(join(tmpdir(), 'svc-log-destination-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A destination writing to a new file, and a reader of that file. */
function destinationFile(name: string) {
  const path = join(dir, name)
  const destination = lineDestination(openSync(path, 'w'))
  return { destination, read: () => readFileSync(path, 'utf8') }
}

describe('lineDestination (pino.destination, one buffer)', () => {
  it('writes every line, in order and byte for byte, across many writes, non-ASCII text and a line larger than one write', async () => {
    const { destination, read } = destinationFile('many.log')
    const lines: string[] = []
    // Every third line in Vietnamese (2- and 3-byte characters) and of another length: some end a batch.
    for (let index = 0; index < 3000; index++) {
      lines.push(index % 3 ? `{"n":${index},"path":"/api/orders/${index}"}\n` : `{"n":${index},"msg":"đăng nhập 👤 ${'ư'.repeat(index % 97)}"}\n`)
    }
    lines.splice(2000, 0, `{"big":"${'x'.repeat(300_000)}"}\n`, `{"after":"big"}\n`)
    for (const line of lines) destination.write(line)
    const expected = lines.join('')
    expect(Buffer.byteLength(expected)).toBeGreaterThan(2 * 64 * 1024)
    await expect.poll(read, { timeout: 20_000 }).toBe(expected)
  })

  it('writes a lone line within the flush interval, without waiting for a full batch', async () => {
    const { destination, read } = destinationFile('one.log')
    destination.write('{"msg":"một dòng"}\n')
    expect(read()).toBe('')
    await expect.poll(read, { timeout: 20_000, interval: 20 }).toBe('{"msg":"một dòng"}\n')
  })
})
