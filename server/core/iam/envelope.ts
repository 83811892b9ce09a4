/** The IAM envelope { code, message, body }: HTTP 200 even when the operation failed. Pure. */

export const IAM_SUCCESS_CODE = 'API000'

export type EnvelopeCheck = { ok: true } | { ok: false, message: string }

/** Fallback when a refusing IAM sends no message. */
export const IAM_REFUSED_MESSAGE = 'IAM từ chối yêu cầu.'

/** The longest IAM message shown to a user, in characters. */
export const MAX_IAM_MESSAGE_CHARS = 300

/** An IAM message fit to show: control characters (and bidi overrides) removed, spaces folded, at most 300 characters. */
export function cleanIamMessage(message: string): string {
  // eslint-disable-next-line no-control-regex
  const text = message.replace(/[\u0000-\u001F\u007F-\u009F\u200E\u200F\u202A-\u202E\u2066-\u2069]+/g, ' ').replace(/\s+/g, ' ').trim()
  const chars = Array.from(text)
  return chars.length > MAX_IAM_MESSAGE_CHARS ? chars.slice(0, MAX_IAM_MESSAGE_CHARS).join('') : text
}

/**
 * The contract's envelope rule: a response with a `code` field other than 'API000' is a refusal carrying the IAM's
 * message; a response without `code` is not checked.
 */
export function checkEnvelope(response: unknown): EnvelopeCheck {
  if (response === null || typeof response !== 'object' || !Object.hasOwn(response, 'code')) return { ok: true }
  const { code, message } = response as { code: unknown, message?: unknown }
  if (code === IAM_SUCCESS_CODE) return { ok: true }
  const text = typeof message === 'string' ? cleanIamMessage(message) : ''
  return { ok: false, message: text || IAM_REFUSED_MESSAGE }
}
