import { describe, expect, it } from 'vitest'
import type { AccessLine } from '../../server/core/access-line'
import { accessLineWriter, createLogger } from '../../server/utils/logger'

/** A JSON logger writing into an array of lines (a write may hold several), with its access-line writer. */
function recordingLogger(level: 'info' | 'debug' = 'info') {
  const lines: string[] = []
  const log = createLogger({ level, format: 'json', access: true }, { write: text => lines.push(...text.split(/(?<=\n)/)), flush: () => {} })
  return { log, lines, writeAccess: accessLineWriter(log)! }
}

const line: AccessLine = { type: 'access', method: 'GET', path: '/api/orders', status: 200, ms: 1.25, bytes: 312, requestId: 'req-1', client: '127.0.0.1', group: 'api' }

describe('access lines of a JSON logger', () => {
  it('are written as pino writes the same entry, with the time they were handed over', () => {
    const { log, lines, writeAccess } = recordingLogger()
    const before = Date.now()
    writeAccess('info', line)
    log.info(line, 'GET /api/orders 200')
    expect(lines).toHaveLength(2)
    const [ours, pinos] = lines.map(text => JSON.parse(text) as Record<string, unknown>)
    expect(Object.keys(ours!)).toEqual(Object.keys(pinos!))
    expect({ ...ours, time: 0 }).toEqual({ ...pinos, time: 0 })
    expect(ours!.time).toBeGreaterThanOrEqual(before)
    expect(lines[0]!.endsWith('}\n')).toBe(true)
  })

  it('go to the destination as they come, in order with the logger\'s other lines (no second buffer)', () => {
    const { log, lines, writeAccess } = recordingLogger()
    writeAccess('info', { ...line, requestId: 'first' })
    expect(lines).toHaveLength(1)
    log.warn('between')
    writeAccess('info', { ...line, requestId: 'second' })
    expect(lines.map(text => (JSON.parse(text) as { requestId?: string }).requestId ?? 'warning')).toEqual(['first', 'warning', 'second'])
  })

  it('keep their level (probes at debug), and escape what a request put in the path', () => {
    const { log, lines, writeAccess } = recordingLogger('debug')
    writeAccess('debug', { ...line, path: '/healthz', group: 'probe' })
    writeAccess('info', { ...line, path: '/api/"quoted"\n\u001B[31m' })
    log.info('drain')
    const [probe, hostile] = lines.map(text => JSON.parse(text) as Record<string, unknown>)
    expect(probe).toMatchObject({ level: 'debug', path: '/healthz', group: 'probe', msg: 'GET /healthz 200' })
    expect(hostile).toMatchObject({ path: '/api/"quoted"\n\u001B[31m', msg: 'GET /api/"quoted"\n\u001B[31m 200' })
    expect(lines[1]!.endsWith('}\n')).toBe(true)
    expect(lines).toHaveLength(3)
  })
})
