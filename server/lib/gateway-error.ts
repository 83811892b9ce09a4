import { STATUS_CODES, type ServerResponse } from 'node:http'
import { useLogger } from './logger'

/** An error of a contract route: HTTP status and the exact Vietnamese message. */
export class GatewayError extends Error {
  override name = 'GatewayError'
  constructor(readonly statusCode: number, readonly statusMessage: string, readonly headers: Record<string, string> = {}) {
    super(statusMessage)
  }
}

/** A problem of the request itself (bad body, missing field, feature off), found before any IAM call. */
export class RequestError extends GatewayError {}

export const MESSAGES = {
  missingCredentials: 'Thiếu tên đăng nhập hoặc mật khẩu.',
  otpNotConfigured: 'Chưa cấu hình gửi OTP (auth.endpoints.otpSend).',
  baseUrlMissing: 'auth.baseURL chưa cấu hình (APP_AUTH_BASE_URL).',
  tokenMissing: 'IAM không trả accessToken (kiểm tra auth.mapping.token).',
  proxyTargetMissing: 'apiProxyTarget chưa cấu hình.',
  cookieTooLarge: 'Phiên đăng nhập vượt quá giới hạn 4 KB của cookie.',
  bodyTooLarge: 'Dữ liệu gửi lên quá lớn.',
  iamUnreachable: 'Không kết nối được IAM.',
  apiPathInvalid: 'Đường dẫn API không hợp lệ.',
  requestTargetInvalid: 'Đường dẫn yêu cầu không hợp lệ.',
  apiUnreachable: 'Không kết nối được máy chủ API.',
  apiTimeout: 'Máy chủ API không phản hồi.',
  internal: 'Lỗi máy chủ nội bộ.',
  crossOrigin: 'Yêu cầu khác nguồn gốc bị từ chối.',
  methodNotAllowed: 'Phương thức không được hỗ trợ.',
  notJson: 'Dữ liệu gửi lên phải ở dạng JSON.',
  bodyTimeout: 'Hết thời gian chờ dữ liệu gửi lên.',
  iamInvalid: 'IAM trả dữ liệu không hợp lệ.',
  iamTooLarge: 'IAM trả dữ liệu quá lớn (tối đa 1 MiB).',
  iamTooManyEntries: 'IAM trả quá nhiều vai trò hoặc quyền (tối đa 10.000).',
  webSocketNotFound: 'Không có WebSocket ở đường dẫn này.',
  tooManyTunnels: 'Quá nhiều kết nối WebSocket đang mở.',
  upgradeUnsupported: 'Chỉ hỗ trợ nâng cấp kết nối lên WebSocket (GET).',
  shuttingDown: 'Máy chủ đang dừng.',
  verifyQueryInvalid: 'Tham số kiểm tra quyền không hợp lệ (chỉ nhận permission và any).',
  verifyNoSession: 'Chưa đăng nhập hoặc phiên đăng nhập đã hết hạn.',
  verifyForbidden: 'Bạn không có quyền truy cập.',
} as const

/** 504 of an IAM call that took longer than APP_AUTH_TIMEOUT: 'IAM không phản hồi sau 10 giây.' with the default. */
export function iamTimeoutMessage(seconds: number): string {
  return `IAM không phản hồi sau ${seconds} giây.`
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
  const body = JSON.stringify({ statusCode: error.statusCode, statusMessage: error.statusMessage, message: error.statusMessage })
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
