import { formatMessage, vi } from '../../shared/messages'
import type { GatewayErrorBody, StepUpHint } from '../../shared/types'

/**
 * Every error of a gateway route as the client reads it: `status` (0 for a network failure) and the
 * Vietnamese `message` (the route's `statusMessage`), and `stepUp` when the 401 asks for a stronger login
 * (useAuth().stepUp(error) starts it).
 */
export class AppError extends Error {
  override name = 'AppError'
  constructor(readonly status: number, message: string, readonly stepUp?: StepUpHint) {
    super(message)
  }

  /**
   * Any thrown value as an AppError: an ofetch FetchError carries the route's JSON body in `data`
   * ({ statusCode, statusMessage }); the reason phrase on the status line is English and is not used.
   * `message` stays the contract's Vietnamese; useAuthMessages().describeError shows it in the page's language.
   */
  static from(error: unknown): AppError {
    if (error instanceof AppError) return error
    const failure = error as { data?: unknown, statusCode?: number, status?: number, response?: unknown, cause?: unknown, message?: unknown, __nuxt_error?: boolean } | null
    // useAsyncData's NuxtError around what useApi threw; from the server render, the payload brings only the
    // NuxtError's statusCode and message (the AppError's), not its cause.
    if (failure?.cause instanceof AppError) return failure.cause
    if (failure?.__nuxt_error && !failure.response && !failure.data && typeof failure.statusCode === 'number' && typeof failure.message === 'string' && failure.message) {
      return new AppError(failure.statusCode, failure.message)
    }
    const data = failure?.data as Partial<GatewayErrorBody> & { message?: unknown } | undefined
    const status = typeof data?.statusCode === 'number' ? data.statusCode : failure?.statusCode ?? failure?.status ?? 0
    if (!status || !failure?.response) return new AppError(0, vi.errors.network)
    const message = typeof data?.statusMessage === 'string' && data.statusMessage
      ? data.statusMessage
      : typeof data?.message === 'string' && data.message ? data.message : formatMessage(vi.errors.httpStatus, { status })
    const stepUp = data?.stepUp && typeof data.stepUp === 'object' ? data.stepUp : undefined
    return new AppError(status, message, stepUp)
  }
}
