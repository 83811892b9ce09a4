import { hostname } from 'node:os'
import { format } from 'node:util'
import { pino, type Logger } from 'pino'
import pretty from 'pino-pretty'
import { jsonString } from '../core/access-line'
import type { LoggingConfig } from '../core/config'
import { batchedStdout } from './log-destination'

export type { Logger } from 'pino'

let logger: Logger | undefined

/**
 * Keys that must never be written, whatever object a log call is handed (a line logs ids and outcomes, never these;
 * this is the second line of defence).
 */
const SECRET_KEYS = ['password', 'otp', 'token', 'accessToken', 'authorization', 'cookie', 'secret']

/** Builds a logger: JSON lines on stdout (batched asynchronous writes, flushed at exit), or pino-pretty's lines for people. */
export function createLogger(settings: LoggingConfig): Logger {
  const options = {
    level: settings.level,
    redact: { paths: SECRET_KEYS, censor: '[redacted]' },
    formatters: { level: (label: string) => ({ level: label }) },
    // Milliseconds since the epoch (pino's own): an ISO date cost an eighth of every line's time.
    timestamp: pino.stdTimeFunctions.epochTime,
  }
  if (settings.format === 'pretty') return pino(options, pretty({ sync: true, singleLine: true, translateTime: 'SYS:HH:MM:ss.l' }))
  const destination = batchedStdout()
  const logger = pino(options, destination)
  jsonWriters.set(logger, (level, members, msg) => destination.write(`{"level":"${level}","time":${Date.now()}${BASE_FIELDS}${members},"msg":${jsonString(msg)}}\n`))
  return logger
}

/** The line writer of each JSON logger made by createLogger (see jsonLineWriter). */
const jsonWriters = new WeakMap<Logger, JsonLineWriter>()
/** What pino writes after `time` for its default base. */
const BASE_FIELDS = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`

/** Writes one line from members already in JSON (each preceded by a comma), as pino would write that entry. */
export type JsonLineWriter = (level: 'debug' | 'info', members: string, msg: string) => void

/**
 * For a JSON logger made by createLogger: a writer of lines whose members the caller formats itself, with pino's own
 * frame (level, time, pid, hostname, ..., msg) and into pino's destination, skipping pino's generic serializer. For
 * the one line every request writes (see core/access-line.ts); the caller checks the level first. Undefined for a
 * pino-pretty logger: log through it as usual.
 */
export function jsonLineWriter(log: Logger): JsonLineWriter | undefined {
  return jsonWriters.get(log)
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
  const write = (level: 'debug' | 'info' | 'warn' | 'error') => (...args: unknown[]) => log[level](format(...args))
  console.debug = write('debug')
  console.log = write('info')
  console.info = write('info')
  console.warn = write('warn')
  console.error = write('error')
}
