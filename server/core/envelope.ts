/** The IAM envelope { code, message, body }: HTTP 200 even when the operation failed. Pure. */

export const IAM_SUCCESS_CODE = 'API000'

export type EnvelopeCheck = { ok: true } | { ok: false, message: string }

/** Fallback when a refusing IAM sends no message. */
export const IAM_REFUSED_MESSAGE = 'IAM từ chối yêu cầu.'

/**
 * The contract's envelope rule: a response with a `code` field other than 'API000' is a refusal carrying the IAM's
 * message; a response without `code` is not checked.
 */
export function checkEnvelope(response: unknown): EnvelopeCheck {
  if (response === null || typeof response !== 'object' || !Object.hasOwn(response, 'code')) return { ok: true }
  const { code, message } = response as { code: unknown, message?: unknown }
  if (code === IAM_SUCCESS_CODE) return { ok: true }
  return { ok: false, message: typeof message === 'string' && message.trim() ? message : IAM_REFUSED_MESSAGE }
}
