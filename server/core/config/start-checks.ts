/**
 * What a configuration that parsed may still lack, or get wrong, said when the server starts
 * (server/plugins/gateway-config.ts); what it lacks keeps /readyz at 503 (server/gate/probes.ts). Pure.
 */
import type { GatewayConfig } from './types'

/**
 * The APP_* variables this configuration needs and lacks: the IAM's base address (APP_AUTH_KIND=iam, mock off: no one
 * can log in without it) and the backend of /api/** (unless APP_API_PROXY=false: a gateway for forward auth alone, or
 * APP_API_ROUTES_FILE names the backends).
 * Requests that need one still get the contract's 500 (its message names what is missing).
 */
export function missingSettings(config: Pick<GatewayConfig, 'kind' | 'mock' | 'baseURL' | 'apiProxy' | 'apiProxyTarget' | 'apiRoutesFile'>): string[] {
  return [
    ...(config.kind === 'iam' && !config.mock && !config.baseURL ? ['APP_AUTH_BASE_URL'] : []),
    // With a routes file the default backend is optional: /api/** that no route matches gets the contract's 500.
    ...(config.apiProxy && !config.apiProxyTarget && !config.apiRoutesFile ? ['APP_API_PROXY_TARGET'] : []),
  ]
}

/** What a missing variable breaks, and what to set: its line in the start's log. */
const MISSING_EFFECTS: Record<string, string> = {
  APP_AUTH_BASE_URL: 'không ai đăng nhập được (500 ở /auth/login), /readyz trả 503. Đặt địa chỉ IAM, hoặc APP_AUTH_MOCK=true.',
  APP_API_PROXY_TARGET: '/api/** trả 500, /readyz trả 503. Đặt địa chỉ backend, hoặc APP_API_PROXY=false cho gateway không có backend (chỉ forward auth).',
}

/** The start's error line for a variable missingSettings names. */
export function missingSettingLine(variable: string): string {
  return `thiếu cấu hình ${variable}: ${MISSING_EFFECTS[variable] ?? ''}`.trim()
}

/**
 * Settings that work, but likely not as meant: one log line each (a warning). `servesTls`: the gateway itself
 * listens with TLS (NITRO_SSL_CERT and NITRO_SSL_KEY).
 */
export function settingWarnings(config: Pick<GatewayConfig, 'kind' | 'oidc' | 'trustProxy' | 'mock'>, servesTls: boolean): string[] {
  const warnings: string[] = []
  // Mock mode logs anyone in with any password, as the mock user (whom forward auth lets through too): a built server
  // that runs it is a demo or a test, never one in front of real users.
  if (config.mock) {
    warnings.push('APP_AUTH_MOCK=true: gateway không hỏi IAM, ai cũng đăng nhập được với mật khẩu bất kỳ thành người dùng giả lập '
      + '(APP_AUTH_MOCK_USER). Chỉ dùng cho demo và kiểm thử, không bao giờ trước người dùng thật.')
  }
  // The OpenID login's addresses come from the request's own origin: behind a proxy that ends TLS that is http://
  // unless the proxy's X-Forwarded-Proto is believed, and the provider refuses (or keeps) an http redirect_uri.
  if (config.kind === 'oidc' && !config.oidc?.redirectUri && config.trustProxy === 0 && !servesTls) {
    warnings.push('APP_AUTH_KIND=oidc mà không có APP_OIDC_REDIRECT_URI và APP_TRUST_PROXY tắt: sau một proxy TLS (nginx, '
      + 'load balancer), redirect_uri gửi OpenID Provider sẽ là http://…/auth/callback. Đặt APP_TRUST_PROXY (số proxy '
      + 'đứng trước, hoặc địa chỉ của chúng) hoặc APP_OIDC_REDIRECT_URI=https://<gateway>/auth/callback.')
  }
  return warnings
}
