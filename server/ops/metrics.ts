import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { fixedLabelHistogram, LATENCY_BUCKETS, STATUS_CLASSES, statusIndex } from './metric-series'
import { routeMetrics } from './route-metrics'

/** Route groups of the request metrics: the contract's routes, the proxy, the probes, everything else ('page'). */
export type RouteGroup = 'login' | 'session' | 'clients' | 'otp' | 'logout' | 'verify' | 'api' | 'probe' | 'page'
/** success; refused by the IAM; limited (429); invalid input (4xx of ours); error (IAM failure, 5xx). */
export type AttemptOutcome = 'success' | 'refused' | 'limited' | 'invalid' | 'error'
export type IamEndpoint = 'login' | 'userInfo' | 'clients' | 'otpSend' | 'logout'

const GROUPS: readonly RouteGroup[] = ['login', 'session', 'clients', 'otp', 'logout', 'verify', 'api', 'probe', 'page']
const METHOD_LABELS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'OTHER'] as const
const GROUP_INDEX = new Map(GROUPS.map((group, index) => [group, index]))
const METHOD_INDEX = new Map<string, number>(METHOD_LABELS.map((method, index) => [method, index]))
/** Why the proxy cut or refused a request to keep the backend's connections for others. */
export type ProxyRefusal = 'body_idle' | 'uploads_per_client' | 'pool_wait'
const PROXY_REFUSALS: readonly ProxyRefusal[] = ['body_idle', 'uploads_per_client', 'pool_wait']

/** The backend pool's state as the proxy reports it (proxy/backend-pool.ts). */
export interface BackendPoolState {
  busy: number
  waiting: number
  size: number
}

let readBackendPool: (() => BackendPoolState) | undefined
let routeNames: string[] | undefined

/**
 * The routes file's route names (ops/config.ts, at start and at each reload): with a routes file, proxied requests are
 * counted by route too, the label's values being 'default' (APP_API_PROXY_TARGET) and every name the file has had.
 * Undefined (no file): no route series.
 */
export function nameRoutes(names: readonly string[] | undefined): void {
  if (!names) return
  routeNames ??= ['default']
  for (const name of names) {
    if (routeNames.includes(name)) continue
    routeNames.push(name)
    metrics?.routes?.add(name)
  }
}
let readSessionCache: (() => { hits: number, misses: number }) | undefined

/** Lets the cache of opened session cookies report its hits and misses (ops/config.ts makes the cache). */
export function watchSessionCache(read: () => { hits: number, misses: number }): void {
  readSessionCache = read
}

/** Lets the backend pool report its state to the metrics and /readyz (the pool is made on the first proxied request). */
export function watchBackendPool(read: () => BackendPoolState): void {
  readBackendPool = read
}

/** The backend pool's state now; undefined before the first proxied request made it. */
export function backendPoolState(): BackendPoolState | undefined {
  return readBackendPool?.()
}

/** Index of a method in METHOD_LABELS: a method outside the usual ones is 'OTHER'. */
function methodIndex(method: string | undefined): number {
  return (method === undefined ? undefined : METHOD_INDEX.get(method)) ?? METHOD_LABELS.length - 1
}

/** Requests by group, method and status class, counted in a typed array (read by the counter's collect at scrape). */
class RequestTally {
  private readonly counts = new Float64Array(GROUPS.length * METHOD_LABELS.length * STATUS_CLASSES.length)

  count(group: RouteGroup, method: string, status: number): void {
    this.counts[(GROUP_INDEX.get(group)! * METHOD_LABELS.length + methodIndex(method)) * STATUS_CLASSES.length + statusIndex(status)]!++
  }

  /** Every combination counted at least once, with its count. */
  * entries(): Generator<[{ group: string, method: string, status_class: string }, number]> {
    for (let index = 0; index < this.counts.length; index++) {
      const count = this.counts[index]!
      if (!count) continue
      const statusAt = index % STATUS_CLASSES.length
      const methodAt = Math.floor(index / STATUS_CLASSES.length) % METHOD_LABELS.length
      const groupAt = Math.floor(index / (STATUS_CLASSES.length * METHOD_LABELS.length))
      yield [{ group: GROUPS[groupAt]!, method: METHOD_LABELS[methodAt]!, status_class: STATUS_CLASSES[statusAt]! }, count]
    }
  }
}

/**
 * The gateway's metrics (Prometheus, through prom-client, names starting with svc_gateway_). Every label value comes
 * from a fixed set, never from a path, a username or an id. Only prom-client's public API: request counts, session cache
 * and open streams are plain arithmetic on the request path, read by each metric's collect() at scrape time; latencies
 * go to histograms whose children are bound once.
 */
function createMetrics() {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: 'svc_gateway_' })
  const registers = [registry]
  const live = { streams: 0, tunnels: 0 }
  // The per-request series: plain arithmetic on the request path, read by the registry at scrape time.
  const requests = new RequestTally()
  new Counter({
    name: 'svc_gateway_requests_total',
    help: 'Requests answered, by route group, method and status class.',
    labelNames: ['group', 'method', 'status_class'],
    registers,
    collect() {
      this.reset()
      for (const [labels, count] of requests.entries()) this.inc(labels, count)
    },
  })
  const requestDuration = fixedLabelHistogram('svc_gateway_request_duration_seconds', 'Time from a request\'s arrival to the end of its answer, by route group.', 'group', GROUPS, registers)
  const backendDuration = fixedLabelHistogram('svc_gateway_backend_duration_seconds', 'Time until the backend\'s answer headers, by status class (none: no answer).', 'status_class', STATUS_CLASSES, registers)
  const metrics = {
    registry,
    live,
    routes: routeNames ? routeMetrics(registers, routeNames) : undefined,
    requests,
    requestDuration,
    backendDuration,
    logins: new Counter({ name: 'svc_gateway_login_attempts_total', help: 'POST /auth/login outcomes.', labelNames: ['outcome'], registers }),
    otps: new Counter({ name: 'svc_gateway_otp_requests_total', help: 'POST /auth/otp/send outcomes.', labelNames: ['outcome'], registers }),
    iamDuration: new Histogram({ name: 'svc_gateway_iam_request_duration_seconds', help: 'IAM calls, by endpoint.', labelNames: ['endpoint'], buckets: LATENCY_BUCKETS, registers }),
    iamFailures: new Counter({ name: 'svc_gateway_iam_failures_total', help: 'IAM calls without a usable answer (unreachable, timeout, invalid, 5xx), by endpoint.', labelNames: ['endpoint', 'reason'], registers }),
    rateLimitBlocks: new Counter({ name: 'svc_gateway_rate_limit_blocks_total', help: 'Attempts refused with 429 by the brute-force limits, by route.', labelNames: ['route'], registers }),
    revocations: new Counter({ name: 'svc_gateway_revocations_total', help: 'Revocations made by this instance: one session (logout) or every session of a user.', labelNames: ['kind'], registers }),
    proxyRefusals: new Counter({ name: 'svc_gateway_proxy_refusals_total', help: 'Proxied requests cut or refused to keep backend connections for others: body_idle (an upload that stopped moving: 408, or cut), uploads_per_client (429), pool_wait (no free backend connection in time: 503).', labelNames: ['reason'], registers }),
  }
  // Outcomes start at 0, so that a rate over them is defined from the first scrape.
  for (const outcome of ['success', 'refused', 'limited', 'invalid', 'error']) {
    metrics.logins.inc({ outcome }, 0)
    metrics.otps.inc({ outcome }, 0)
  }
  for (const route of ['login', 'otp']) metrics.rateLimitBlocks.inc({ route }, 0)
  for (const kind of ['session', 'user']) metrics.revocations.inc({ kind }, 0)
  for (const reason of PROXY_REFUSALS) metrics.proxyRefusals.inc({ reason }, 0)
  const poolGauge = (name: string, help: string, read: (state: BackendPoolState) => number) => new Gauge({
    name,
    help,
    registers,
    collect() {
      const state = backendPoolState()
      this.set(state ? read(state) : 0)
    },
  })
  poolGauge('svc_gateway_backend_connections_busy', 'Backend connections held by proxied exchanges now.', state => state.busy)
  poolGauge('svc_gateway_backend_connections_max', 'Backend connections at most (APP_API_PROXY_CONNECTIONS).', state => state.size)
  poolGauge('svc_gateway_backend_pool_waiting', 'Proxied requests waiting for a backend connection now (all busy).', state => state.waiting)
  new Counter({
    name: 'svc_gateway_session_cache_total',
    help: 'Session cookies opened from the cache (hit) or with AES-GCM (miss).',
    labelNames: ['result'],
    registers,
    collect() {
      this.reset()
      const counts = readSessionCache?.() ?? { hits: 0, misses: 0 }
      this.inc({ result: 'hit' }, counts.hits)
      this.inc({ result: 'miss' }, counts.misses)
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
