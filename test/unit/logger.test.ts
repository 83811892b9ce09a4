import { afterEach, describe, expect, it, vi } from 'vitest'
import type { AccessLine } from '../../server/core/ops/access-line'
import { PassThrough } from 'node:stream'
import { accessLineWriter, createLogger, flushLogs, prettyStream, setLogger } from '../../server/ops/logger'

/** A JSON logger writing into an array of lines (a write may hold several), with its access-line writer. */
function recordingLogger(level: 'info' | 'debug' = 'info') {
  const lines: string[] = []
  const log = createLogger({ level, format: 'json', access: true }, { write: text => lines.push(...text.split(/(?<=\n)/)), flush: () => {} })
  return { log, lines, writeAccess: accessLineWriter(log)! }
}

const line: AccessLine = { type: 'access', method: 'GET', path: '/api/orders', status: 200, ms: 1.25, bytes: 312, requestId: 'req-1', client: '127.0.0.1', group: 'api' }

describe('access lines of a JSON logger', () => {
  it('are let out, with the destination\'s own buffer, by flushLogs', () => {
    const lines: string[] = []
    let flushed = 0
    const log = setLogger(createLogger({ level: 'info', format: 'json', access: true }, { write: text => lines.push(text), flush: () => flushed++ }))
    accessLineWriter(log)!('info', line)
    expect(lines).toEqual([])
    flushLogs()
    expect(lines).toHaveLength(1)
    expect(flushed).toBe(1)
  })

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

  it('wait to be formatted together, but never behind a later line of the same logger', () => {
    const { log, lines, writeAccess } = recordingLogger()
    writeAccess('info', { ...line, requestId: 'first' })
    writeAccess('info', { ...line, requestId: 'second' })
    expect(lines).toEqual([])
    log.warn('after both')
    expect(lines.map(text => (JSON.parse(text) as { requestId?: string, msg: string }).requestId ?? 'warning')).toEqual(['first', 'second', 'warning'])
  })

  it('are written within 50 ms when nothing else comes, and at once when 256 are waiting', async () => {
    const { lines, writeAccess } = recordingLogger()
    writeAccess('info', line)
    await expect.poll(() => lines.length, { timeout: 20_000, interval: 10 }).toBe(1)
    lines.length = 0
    for (let index = 0; index < 255; index++) writeAccess('info', line)
    expect(lines).toHaveLength(0)
    writeAccess('info', line)
    expect(lines).toHaveLength(256)
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

describe('pretty lines (APP_LOG_FORMAT=pretty)', () => {
  /** Everything a stream has received so far, read whenever asked. */
  function recorded(sink: PassThrough): () => string {
    let text = ''
    sink.on('data', chunk => text += String(chunk))
    return () => text
  }

  /** The colour variables of the environment the test runs in (whatever they are) set as given, or removed. */
  function colourEnv(env: { FORCE_COLOR?: string, NO_COLOR?: string }) {
    vi.stubEnv('FORCE_COLOR', env.FORCE_COLOR)
    vi.stubEnv('NO_COLOR', env.NO_COLOR)
  }
  afterEach(() => {
    vi.unstubAllEnvs()
  })

  /** One line through a pretty stream into a pipe (not a terminal), once pino-pretty has written it. */
  async function prettyLine(): Promise<string> {
    const sink = new PassThrough()
    const stream = prettyStream(undefined, sink)
    const text = recorded(sink)
    stream.write(`${JSON.stringify({ level: 30, time: 0, msg: 'before the load' })}\n`)
    await expect.poll(() => text().endsWith('\n'), { timeout: 20_000 }).toBe(true)
    return text()
  }

  it('go through pino-pretty, lines logged before it loaded included', async () => {
    colourEnv({})
    const line = await prettyLine()
    expect(line).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: before the load\n$/)
  })

  it('carry colours only as FORCE_COLOR and NO_COLOR say (FORCE_COLOR=0: none, though colorette takes it as "on")', async () => {
    colourEnv({ FORCE_COLOR: '0' })
    expect(await prettyLine()).toMatch(/\] INFO: before the load\n$/)
    colourEnv({ NO_COLOR: '1', FORCE_COLOR: '1' })
    expect(await prettyLine()).toMatch(/\] INFO: before the load\n$/)
    colourEnv({ FORCE_COLOR: '1' })
    expect(await prettyLine()).toContain('] \u001B[32mINFO\u001B[39m: \u001B[36mbefore the load\u001B[39m\n')
  })

  it('go out as JSON, after one warning line, when pino-pretty is not installed (--omit=optional)', async () => {
    const sink = new PassThrough()
    const stream = prettyStream(() => Promise.reject(new Error('Cannot find package \'pino-pretty\'')), sink)
    const entry = JSON.stringify({ level: 30, time: 0, msg: 'kept' })
    const text = recorded(sink)
    stream.write(`${entry}\n`)
    await expect.poll(() => text().split('\n').length, { timeout: 20_000 }).toBe(3)
    const lines = text().trimEnd().split('\n')
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'warn', msg: 'APP_LOG_FORMAT=pretty: chưa cài pino-pretty (npm install pino-pretty), log ghi dạng JSON.' })
    expect(lines[1]).toBe(entry)
  })
})
