import type { H3Event } from 'h3'
import { keepsSecureCookies } from '../../shared/secure-cookies'
import { requestScope } from '../http/scope'
import { useLogger } from '../ops/logger'

let warned = false

/**
 * Whether the browser that sent this request keeps the gateway's Secure cookies. It does not when the request came
 * over plain http (the socket, or X-Forwarded-Proto from a proxy believed through APP_TRUST_PROXY) to a host that is
 * not the browser's own machine: svc_session is dropped, and the login comes back to the login page. Then the first
 * such request of the process logs one warning naming https and APP_TRUST_PROXY; Secure itself is never given up.
 * Always true under `nuxt dev` (its cookies are not Secure) and for internal calls (SSR `$fetch`: no scope).
 */
export function keepsSessionCookie(event: H3Event): boolean {
  const client = requestScope(event)?.client
  // `nuxt dev` sends its cookies without Secure (cookie.ts).
  if (import.meta.dev || !client || keepsSecureCookies(`${client.proto}:`, client.host)) return true
  // A proxy in front that APP_TRUST_PROXY does not believe says the browser came over https: it keeps the cookie.
  if (!client.viaTrustedProxy && /^\s*https\s*(?:,|$)/i.test(String(event.node.req.headers['x-forwarded-proto'] ?? ''))) return true
  if (!warned) {
    warned = true
    useLogger().warn({ host: client.host.slice(0, 200) }, 'một yêu cầu đến qua http (không phải https): cookie svc_session có cờ Secure nên trình duyệt bỏ nó, người dùng đăng nhập xong lại quay về trang đăng nhập. Hãy phục vụ gateway qua https; nếu TLS kết thúc ở proxy phía trước (nginx, load balancer, ingress), đặt APP_TRUST_PROXY để gateway tin X-Forwarded-Proto của proxy.')
  }
  return false
}
