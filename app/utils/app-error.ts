import type { GatewayErrorBody } from '../../shared/types'

/** Shown when the gateway could not be reached at all. */
const NETWORK_ERROR_MESSAGE = 'Không kết nối được máy chủ. Vui lòng kiểm tra mạng và thử lại.'

/**
 * Every error of a gateway route as the client reads it: `status` (0 for a network failure) and the
 * Vietnamese `message` (the route's `statusMessage`).
 */
export class AppError extends Error {
  override name = 'AppError'
  constructor(readonly status: number, message: string) {
    super(message)
  }

  /**
   * Any thrown value as an AppError: an ofetch FetchError carries the route's JSON body in `data`
   * ({ statusCode, statusMessage }); the reason phrase on the status line is English and is not used.
   */
  static from(error: unknown): AppError {
    if (error instanceof AppError) return error
    const failure = error as { data?: unknown, statusCode?: number, status?: number, response?: unknown } | null
    const data = failure?.data as Partial<GatewayErrorBody> & { message?: unknown } | undefined
    const status = typeof data?.statusCode === 'number' ? data.statusCode : failure?.statusCode ?? failure?.status ?? 0
    if (!status || !failure?.response) return new AppError(0, NETWORK_ERROR_MESSAGE)
    const message = typeof data?.statusMessage === 'string' && data.statusMessage
      ? data.statusMessage
      : typeof data?.message === 'string' && data.message ? data.message : `Lỗi máy chủ (HTTP ${status}).`
    return new AppError(status, message)
  }
}
