import { capLogField } from '../core/ops/log-field'
import { useLogger } from './logger'
import { currentTraceFields } from './tracing/spans'

/**
 * One audit line (type 'audit'), at info level unless said otherwise: what happened (`name`), its fields, and for a
 * request who sent it (http/audit.ts adds the client's address and the request id). Every text field is capped
 * (capLogField: 128 characters, marked as cut): a username, an application code or a name comes from a client or an IAM.
 * With tracing on, the current span's `traceId` and `spanId` join it to its trace.
 */
export function auditLine(name: string, fields: Record<string, unknown>, level: 'info' | 'warn' | 'error' = 'info', request?: Record<string, unknown>): void {
  const capped: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(fields)) capped[key] = typeof value === 'string' ? capLogField(value) : value
  useLogger()[level]({ type: 'audit', event: name, ...capped, ...request, ...currentTraceFields() }, name)
}
