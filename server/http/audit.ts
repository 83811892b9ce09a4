import type { H3Event } from 'h3'
import { capLogField } from '../core/ops/log-field'
import { GatewayError, RequestError } from './errors'
import { IamRefusal } from '../iam/client'
import { useLogger } from '../ops/logger'
import { requestScope, unscopedClient } from '../gate/gate'
import { useMetrics, type AttemptOutcome } from '../ops/metrics'

/** The client's address, through APP_TRUST_PROXY reverse proxies (the request scope's, worked out at the gate). */
export function clientAddress(event: H3Event): string {
  return (requestScope(event)?.client ?? unscopedClient(event.node.req)).ip
}

/** What an audit line says of a request: who, from where, through which application, under which request id. */
function requestFields(event: H3Event) {
  return { client: clientAddress(event), requestId: requestScope(event)?.id ?? null }
}

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
 */
export async function auditedAttempt<T>(event: H3Event, kind: 'login' | 'otp', run: (record: AttemptRecord) => Promise<T>): Promise<T> {
  const record: AttemptRecord = {}
  const counter = kind === 'login' ? useMetrics()?.logins : useMetrics()?.otps
  try {
    const result = await run(record)
    counter?.inc({ outcome: 'success' })
    audit(event, EVENTS[kind].success, { ...record })
    return result
  }
  catch (error) {
    const outcome = outcomeOf(error)
    counter?.inc({ outcome })
    if (outcome === 'limited') useMetrics()?.rateLimitBlocks.inc({ route: kind })
    if (outcome !== 'invalid') {
      const status = error instanceof GatewayError ? error.statusCode : 500
      audit(event, EVENTS[kind][outcome], { ...record, status }, 'warn')
    }
    throw error
  }
}

/**
 * One audit line (type 'audit'), at info level unless said otherwise. Every text field is capped (capLogField: 128
 * characters, marked as cut): a username, an application code or a name comes from a client or an IAM.
 */
export function audit(event: H3Event | undefined, name: string, fields: Record<string, unknown>, level: 'info' | 'warn' | 'error' = 'info'): void {
  const capped: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(fields)) capped[key] = typeof value === 'string' ? capLogField(value) : value
  useLogger()[level]({ type: 'audit', event: name, ...capped, ...(event ? requestFields(event) : {}) }, name)
}
