import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { useGatewayConfig } from './gateway-config'

/** Route groups of the request metrics: the contract's routes, the proxy, the probes, everything else ('page'). */
export type RouteGroup = 'login' | 'session' | 'clients' | 'otp' | 'logout' | 'api' | 'probe' | 'page'
/** success; refused by the IAM; limited (429); invalid input (4xx of ours); error (IAM failure, 5xx). */
export type AttemptOutcome = 'success' | 'refused' | 'limited' | 'invalid' | 'error'
export type IamEndpoint = 'login' | 'userInfo' | 'clients' | 'otpSend' | 'logout'

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])
const STATUS_CLASSES = ['none', '1xx', '2xx', '3xx', '4xx', '5xx']
/** Seconds: from 1 ms to a minute (the proxy's default timeout). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

/** A label value from a fixed set: a method outside the usual ones is 'OTHER'. */
export function methodLabel(method: string | undefined): string {
  return method && METHODS.has(method) ? method : 'OTHER'
}

/** 404 is '4xx'; no status (0: no answer) is 'none'. */
export function statusClass(status: number): string {
  return STATUS_CLASSES[Math.floor(status / 100)] ?? 'none'
}

/**
 * The gateway's metrics (Prometheus, through prom-client, names starting with svc_gateway_). Every label value comes
 * from a fixed set, never from a path, a username or an id. Counts that change on every request (session cache,
 * open streams) are plain numbers read at scrape time.
 */
function createMetrics() {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: 'svc_gateway_' })
  const registers = [registry]
  const { sessions } = useGatewayConfig()
  const live = { streams: 0, tunnels: 0 }
  const metrics = {
    registry,
    live,
    requests: new Counter({ name: 'svc_gateway_requests_total', help: 'Requests answered, by route group, method and status class.', labelNames: ['group', 'method', 'status_class'], registers }),
    requestDuration: new Histogram({ name: 'svc_gateway_request_duration_seconds', help: 'Time from a request\'s arrival to the end of its answer, by route group.', labelNames: ['group'], buckets: LATENCY_BUCKETS, registers }),
    backendDuration: new Histogram({ name: 'svc_gateway_backend_duration_seconds', help: 'Time until the backend\'s answer headers, by status class (none: no answer).', labelNames: ['status_class'], buckets: LATENCY_BUCKETS, registers }),
    logins: new Counter({ name: 'svc_gateway_login_attempts_total', help: 'POST /auth/login outcomes.', labelNames: ['outcome'], registers }),
    otps: new Counter({ name: 'svc_gateway_otp_requests_total', help: 'POST /auth/otp/send outcomes.', labelNames: ['outcome'], registers }),
    iamDuration: new Histogram({ name: 'svc_gateway_iam_request_duration_seconds', help: 'IAM calls, by endpoint.', labelNames: ['endpoint'], buckets: LATENCY_BUCKETS, registers }),
    iamFailures: new Counter({ name: 'svc_gateway_iam_failures_total', help: 'IAM calls without a usable answer (unreachable, timeout, invalid, 5xx), by endpoint.', labelNames: ['endpoint', 'reason'], registers }),
    rateLimitBlocks: new Counter({ name: 'svc_gateway_rate_limit_blocks_total', help: 'Attempts refused with 429 by the brute-force limits, by route.', labelNames: ['route'], registers }),
    revocations: new Counter({ name: 'svc_gateway_revocations_total', help: 'Revocations made by this instance: one session (logout) or every session of a user.', labelNames: ['kind'], registers }),
  }
  // Outcomes start at 0, so that a rate over them is defined from the first scrape.
  for (const outcome of ['success', 'refused', 'limited', 'invalid', 'error']) {
    metrics.logins.inc({ outcome }, 0)
    metrics.otps.inc({ outcome }, 0)
  }
  for (const route of ['login', 'otp']) metrics.rateLimitBlocks.inc({ route }, 0)
  for (const kind of ['session', 'user']) metrics.revocations.inc({ kind }, 0)
  new Counter({
    name: 'svc_gateway_session_cache_total',
    help: 'Session cookies opened from the cache (hit) or with AES-GCM (miss).',
    labelNames: ['result'],
    registers,
    collect() {
      this.reset()
      this.inc({ result: 'hit' }, sessions.hits)
      this.inc({ result: 'miss' }, sessions.misses)
    },
  })
  new Gauge({
    name: 'svc_gateway_open_streams',
    help: 'Proxied /api exchanges in progress.',
    registers,
    collect() {
      this.set(live.streams)
    },
  })
  new Gauge({
    name: 'svc_gateway_open_tunnels',
    help: 'WebSocket tunnels through /api open now.',
    registers,
    collect() {
      this.set(live.tunnels)
    },
  })
  return metrics
}

export type GatewayMetrics = ReturnType<typeof createMetrics>

let metrics: GatewayMetrics | undefined

/** Turns the metrics on (APP_METRICS_PORT set): until then nothing is counted and nothing costs. */
export function enableMetrics(): GatewayMetrics {
  metrics ??= createMetrics()
  return metrics
}

/** The metrics when they are on, else undefined (callers write `useMetrics()?.logins.inc(...)`). */
export function useMetrics(): GatewayMetrics | undefined {
  return metrics
}
