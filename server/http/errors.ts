import { STATUS_CODES, type ServerResponse } from 'node:http'
import { formatMessage, vi } from '../../shared/messages'
import { useLogger } from '../ops/logger'

/** An error of a contract route: HTTP status and the exact Vietnamese message. */
export class GatewayError extends Error {
  override name = 'GatewayError'
  /** `body`: fields the JSON answer carries beside statusCode and statusMessage (a step-up's `stepUp`). */
  constructor(readonly statusCode: number, readonly statusMessage: string, readonly headers: Record<string, string> = {}, readonly body: Record<string, unknown> = {}) {
    super(statusMessage)
  }
}

/** A problem of the request itself (bad body, missing field, feature off), found before any IAM call. */
export class RequestError extends GatewayError {}

/** An IAM refusal: the envelope said no, or the IAM answered 401/403. Counted by the brute-force limits. */
export class IamRefusal extends GatewayError {}

/** The contract's messages, exactly (shared/messages/vi.ts: the pages recognise them there to show them in their language). */
export const MESSAGES = vi.errors

/** 504 of an IAM call that took longer than APP_AUTH_TIMEOUT: 'IAM không phản hồi sau 10 giây.' with the default. */
export function iamTimeoutMessage(seconds: number): string {
  return formatMessage(MESSAGES.iamTimeout, { seconds })
}

/**
 * Writes the contract's error body `{ statusCode, statusMessage }` as JSON, whatever the Accept header,
 * with the standard reason phrase on the status line (h3 would strip the Vietnamese one).
 */
export function sendGatewayError(res: ServerResponse, error: GatewayError): void {
  if (res.headersSent) {
    res.destroy()
    return
  }
  const body = JSON.stringify({ statusCode: error.statusCode, statusMessage: error.statusMessage, message: error.statusMessage, ...error.body })
  res.statusCode = error.statusCode
  res.statusMessage = STATUS_CODES[error.statusCode] ?? ''
  res.setHeader('content-type', 'application/json; charset=utf-8')
  res.setHeader('content-length', Buffer.byteLength(body))
  res.setHeader('cache-control', 'no-store')
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value)
  res.end(body)
}

/** Any thrown value as a GatewayError; unexpected ones are logged (message only) and become a 500. */
export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error
  useLogger().error({ error: error instanceof Error ? error.message : typeof error }, 'lỗi không mong đợi')
  return new GatewayError(500, MESSAGES.internal)
}
