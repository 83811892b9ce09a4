import { hostname } from 'node:os'
import { PassThrough } from 'node:stream'
import { format } from 'node:util'
import { pino, type Logger } from 'pino'
import type { LoggingConfig } from '../core/config/types'
import { accessLineMembers, jsonString, type AccessLine } from '../core/ops/access-line'
import { wantsColour } from '../core/ops/log-colour'
import { withoutQueries } from '../core/ops/log-field'
import { lineDestination, type LineDestination } from './log-destination'

export type { Logger } from 'pino'

let logger: Logger | undefined

/**
 * Keys that must never be written, whatever object a log call is handed (a line logs ids and outcomes, never these;
 * this is the second line of defence).
 */
const SECRET_KEYS = ['password', 'otp', 'token', 'accessToken', 'authorization', 'cookie', 'secret']

/**
 * Builds a logger: JSON lines on stdout through one asynchronous buffer (ops/log-destination.ts, flushed at exit
 * and by flushLogs), or pino-pretty's lines for people. `destination` replaces stdout for the JSON lines (tests).
 */
export function createLogger(settings: LoggingConfig, destination?: LineDestination): Logger {
  const options = {
    level: settings.level,
    redact: { paths: SECRET_KEYS, censor: '[redacted]' },
    formatters: { level: (label: string) => ({ level: label }) },
    // Milliseconds since the epoch (pino's own): an ISO date cost an eighth of every line's time.
    timestamp: pino.stdTimeFunctions.epochTime,
  }
  if (settings.format === 'pretty') return pino(options, prettyStream())
  const out = destination ?? lineDestination(1)
  const accessLines = waitingAccessLines(out)
  // Any other line lets the waiting access lines out first: the log keeps the order things happened in.
  const logger = pino(options, { write: (line: string) => {
    accessLines.drain()
    out.write(line)
  } })
  accessWriters.set(logger, accessLines.add)
  flushers.set(logger, () => {
    accessLines.drain()
    out.flush()
  })
  return logger
}

type PrettyModule = { default: (options: Record<string, unknown>) => NodeJS.WritableStream }

/**
 * pino-pretty's stream, loaded only when pretty lines are asked for (APP_LOG_FORMAT=pretty, `nuxt dev`): a JSON
 * logger never loads it. Lines logged before it has loaded (a few ms) wait in the pass-through. pino-pretty is an
 * optional dependency (an image built with `--omit=optional` has none): without it the lines go out as JSON, after
 * one line saying so. Colours as the environment asks (core/ops/log-colour.ts) for `out` (stdout unless given).
 */
export function prettyStream(load: () => Promise<PrettyModule> = () => import('pino-pretty') as Promise<PrettyModule>, out?: NodeJS.WritableStream): NodeJS.WritableStream {
  const lines = new PassThrough()
  const colorize = wantsColour(process.env, !!((out ?? process.stdout) as { isTTY?: boolean }).isTTY)
  load().then(
    ({ default: pretty }) => lines.pipe(pretty({ sync: true, singleLine: true, colorize, translateTime: 'SYS:HH:MM:ss.l', ...(out && { destination: out }) })),
    (error: NodeJS.ErrnoException) => {
      // Only a missing package falls back to JSON; any other failure to load it is the process's to see.
      if (error?.code !== 'ERR_MODULE_NOT_FOUND' && !/Cannot find (package|module)/.test(String(error?.message))) throw error
      out ??= process.stdout
      out.write(`${JSON.stringify({ level: 'warn', time: Date.now(), msg: 'APP_LOG_FORMAT=pretty: chưa cài pino-pretty (npm install pino-pretty), log ghi dạng JSON.' })}\n`)
      lines.pipe(out)
    },
  )
  return lines
}

/** The synchronous flush of each JSON logger made by createLogger. */
const flushers = new WeakMap<Logger, () => void>()

/** Writes every line the process's logger still holds, synchronously: at the end of a drain and on a fatal error. */
export function flushLogs(): void {
  if (logger) flushers.get(logger)?.()
}

/** The access-line writer of each JSON logger made by createLogger (see accessLineWriter). */
const accessWriters = new WeakMap<Logger, AccessLineWriter>()
/** What pino writes after `time` for its default base. */
const BASE_FIELDS = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`
/** Access lines wait at most this long to be formatted... */
const ACCESS_WAIT_MS = 50
/** ...or until this many are waiting. */
const ACCESS_BATCH = 256

/** Takes one access line, to be written as pino would write `log[level](line, msg)` (msg: method, path, status). */
export type AccessLineWriter = (level: 'debug' | 'info', line: AccessLine) => void

/**
 * Access lines formatted together: each request hands over its line's fields with the time, and the lines of up to
 * 50 ms (or 256 lines) are formatted in one go, in pino's frame (level, time, pid, hostname, ..., msg) without pino's
 * generic serializer, and handed to the destination as one text. This is a step of formatting, not a second buffer
 * of bytes: it is drained before any other line of the logger, by flushLogs and at exit. Measured head to head
 * (bench:ab, bench/RESULTS.md 2026-11-24 22:40 UTC): formatting and handing over each line as its request ends cost
 * the proxy 2.2% of its throughput.
 */
function waitingAccessLines(destination: LineDestination): { add: AccessLineWriter, drain: () => void } {
  // [level, time, line] for each waiting line, flat: no object a request.
  let waiting: (string | number | AccessLine)[] = []
  let timer: NodeJS.Timeout | undefined
  const drain = () => {
    clearTimeout(timer)
    timer = undefined
    if (!waiting.length) return
    const entries = waiting
    waiting = []
    // One text for the destination (one encoding, one hand-over), alive only in this function.
    let text = ''
    for (let index = 0; index < entries.length; index += 3) {
      const line = entries[index + 2] as AccessLine
      const msg = jsonString(`${line.method} ${line.path} ${line.status}`)
      text += `{"level":"${entries[index]}","time":${entries[index + 1]}${BASE_FIELDS}${accessLineMembers(line)},"msg":${msg}}\n`
    }
    destination.write(text)
  }
  // Before the destination's own exit handler, which writes what it holds synchronously.
  process.prependListener('exit', drain)
  const add: AccessLineWriter = (level, line) => {
    if (waiting.push(level, Date.now(), line) >= ACCESS_BATCH * 3) drain()
    else timer ??= setTimeout(drain, ACCESS_WAIT_MS)
  }
  return { add, drain }
}

/**
 * For a JSON logger made by createLogger: the writer of the access line every request writes (see
 * core/ops/access-line.ts and waitingAccessLines); the caller checks the level first. Undefined for a pino-pretty
 * logger: log through it as usual.
 */
export function accessLineWriter(log: Logger): AccessLineWriter | undefined {
  return accessWriters.get(log)
}

/** The gateway's logger (APP_LOG_LEVEL, APP_LOG_FORMAT; set at start by plugins/gateway-config.ts), one per process. */
export function useLogger(): Logger {
  logger ??= createLogger({ level: 'info', format: 'json', access: true })
  return logger
}

/** Replaces the process's logger (at start, once the settings are read). */
export function setLogger(next: Logger): Logger {
  logger = next
  return next
}

/**
 * Sends console.* of the whole server (Nitro's "Listening on", Vue's warnings, an app's own calls) through the logger,
 * so that stdout holds nothing but log lines. Production only: the dev server keeps its own console.
 */
export function routeConsoleToLogger(log: Logger): void {
  const write = (level: 'debug' | 'info' | 'warn' | 'error') => (...args: unknown[]) => log[level](withoutQueries(format(...args)))
  console.debug = write('debug')
  console.log = write('info')
  console.info = write('info')
  console.warn = write('warn')
  console.error = write('error')
}
