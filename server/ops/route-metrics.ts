import { Counter, Gauge, type Registry } from 'prom-client'
import { fixedLabelHistogram, STATUS_CLASSES, statusIndex } from './metric-series'

/**
 * The series of the routes file's routes (only with APP_API_ROUTES_FILE): proxied requests and their latency by route,
 * and each route's connection pool. The label's values are the routes' names (and 'default'), never a path.
 */

/** A route's connection pool as the proxy reports it (proxy/routes.ts): zeros and its size before its first request. */
export interface RoutePoolState {
  route: string
  busy: number
  waiting: number
  size: number
}

let readRoutePools: (() => RoutePoolState[]) | undefined

/** Lets the proxy report its routes' pools to the metrics (proxy/routes.ts, when it first makes its route table). */
export function watchRoutePools(read: () => RoutePoolState[]): void {
  readRoutePools = read
}

/** Route names the route label takes at most: names a reload adds beyond it are not counted. */
const MAX_ROUTE_LABELS = 4096

/**
 * Proxied requests by route and status class, and their latency by route (only with a routes file). The label's set
 * is the routes' names, growing when a reload (SIGHUP) brings new ones (`add`), never a path.
 */
export function routeMetrics(registers: Registry[], names: readonly string[]) {
  const known: string[] = []
  const indexOf = new Map<string, number>()
  const counts: number[] = []
  new Counter({
    name: 'svc_gateway_route_requests_total',
    help: 'Proxied /api requests answered, by route of APP_API_ROUTES_FILE (default: APP_API_PROXY_TARGET) and status class.',
    labelNames: ['route', 'status_class'],
    registers,
    collect() {
      this.reset()
      for (let index = 0; index < counts.length; index++) {
        const count = counts[index]!
        if (count) this.inc({ route: known[Math.floor(index / STATUS_CLASSES.length)]!, status_class: STATUS_CLASSES[index % STATUS_CLASSES.length]! }, count)
      }
    },
  })
  const duration = fixedLabelHistogram('svc_gateway_route_duration_seconds', 'Time from a proxied request\'s arrival to the end of its answer, by route.', 'route', [], registers, MAX_ROUTE_LABELS)
  const routes = {
    /** Takes a route's name into the label's set. */
    add(name: string): void {
      if (indexOf.has(name) || known.length >= MAX_ROUTE_LABELS) return
      indexOf.set(name, known.length)
      known.push(name)
      counts.push(...STATUS_CLASSES.map(() => 0))
      duration.extend(name)
    },
    /** Counts one exchange of a route (a name outside the set is not counted); `seconds` only for requests. */
    count(route: string, status: number, seconds?: number): void {
      const index = indexOf.get(route)
      if (index === undefined) return
      counts[index * STATUS_CLASSES.length + statusIndex(status)]!++
      if (seconds !== undefined) duration.observe(route, seconds)
    },
  }
  for (const name of names) routes.add(name)
  const poolGauge = (name: string, help: string, read: (state: RoutePoolState) => number) => new Gauge({
    name,
    help,
    labelNames: ['route'],
    registers,
    collect() {
      this.reset()
      for (const state of readRoutePools?.() ?? []) this.set({ route: state.route }, read(state))
    },
  })
  poolGauge('svc_gateway_route_connections_busy', 'Backend connections held by proxied exchanges now, by route.', state => state.busy)
  poolGauge('svc_gateway_route_connections_max', 'Backend connections at most, by route (APP_API_PROXY_CONNECTIONS each).', state => state.size)
  poolGauge('svc_gateway_route_pool_waiting', 'Proxied requests waiting for a backend connection now (all busy), by route.', state => state.waiting)
  return routes
}
