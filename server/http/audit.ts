import type { H3Event } from 'h3'
import { auditLine } from '../ops/audit'
import { useMetrics, type AttemptOutcome } from '../ops/metrics'
import { OUTCOME_ATTRIBUTE, traced } from '../ops/tracing/spans'
import { GatewayError, IamRefusal, RequestError } from './errors'
import { clientAddress, requestScope } from './scope'

/** What a login or OTP attempt learned of its user while it ran. */
export interface AttemptRecord {
  username?: string
  application?: string
  userId?: string
}

/** The outcome of a failed attempt, by what failed: the limits, the IAM's refusal, the request itself, or the rest. */
function outcomeOf(error: unknown): AttemptOutcome {
  if (error instanceof GatewayError && error.statusCode === 429) return 'limited'
  if (error instanceof IamRefusal) return 'refused'
  if (error instanceof RequestError) return 'invalid'
  return 'error'
}

const EVENTS = {
  login: { success: 'login.success', refused: 'login.refused', limited: 'login.limited', error: 'login.error' },
  otp: { success: 'otp.sent', refused: 'otp.refused', limited: 'otp.limited', error: 'otp.error' },
} as const

/**
 * Runs one POST /auth/login or /auth/otp/send, counts its outcome (success, refused, limited, invalid, error) and
 * writes its audit line: username, user id, application, client address, request id. Never the password, the OTP
 * code or a token. A request that was not even valid (400, 413, 415, 408) has no audit line, only its count.
 * With tracing on, the attempt is a span (`login`, `otp send`) with its outcome; its IAM calls are its children.
 */
export function auditedAttempt<T>(event: H3Event, kind: 'login' | 'otp', run: (record: AttemptRecord) => Promise<T>): Promise<T> {
  return traced(kind === 'login' ? 'login' : 'otp send', 'internal', {}, async (span) => {
    const record: AttemptRecord = {}
    const counter = kind === 'login' ? useMetrics()?.logins : useMetrics()?.otps
    try {
      const result = await run(record)
      counter?.inc({ outcome: 'success' })
      span?.setAttribute(OUTCOME_ATTRIBUTE, 'success')
      audit(event, EVENTS[kind].success, { ...record })
      return result
    }
    catch (error) {
      const outcome = outcomeOf(error)
      counter?.inc({ outcome })
      span?.setAttribute(OUTCOME_ATTRIBUTE, outcome)
      if (outcome === 'limited') useMetrics()?.rateLimitBlocks.inc({ route: kind })
      if (outcome !== 'invalid') {
        const status = error instanceof GatewayError ? error.statusCode : 500
        audit(event, EVENTS[kind][outcome], { ...record, status }, 'warn')
      }
      throw error
    }
  })
}

/**
 * One audit line of a request (see ops/audit.ts): the fields given, then the client's address and the request id.
 */
export function audit(event: H3Event, name: string, fields: Record<string, unknown>, level: 'info' | 'warn' | 'error' = 'info'): void {
  auditLine(name, fields, level, { client: clientAddress(event), requestId: requestScope(event)?.id ?? null })
}
