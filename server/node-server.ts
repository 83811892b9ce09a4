/**
 * The gateway's Node server: the one place it is made. Nitro's entry for the layer's preset (server/preset.ts, which
 * extends Nitro's `node-server` with this file; nuxt.config.ts selects it). Here the `http.Server` is created with its
 * time limits, each request goes through the gate to the streaming proxy or to Nitro, WebSocket handshakes are taken,
 * the server listens on Nitro's variables (NITRO_PORT/PORT, NITRO_HOST/HOST, NITRO_UNIX_SOCKET, NITRO_SSL_CERT and
 * NITRO_SSL_KEY), and SIGTERM or SIGINT drains it. Under `nuxt dev` Nitro's development server stands in for this file
 * (server/dev/gate.ts, proxy/dev-tunnel.ts).
 */
import '#nitro-internal-pollyfills'
import { Server as HttpServer, type IncomingMessage, type ServerOptions, type ServerResponse } from 'node:http'
import { Server as HttpsServer } from 'node:https'
import type { AddressInfo, Socket } from 'node:net'
import wsAdapter from 'crossws/adapters/node'
import { toNodeListener } from 'h3'
import { useNitroApp, useRuntimeConfig } from 'nitropack/runtime'
import { startScheduleRunner } from 'nitropack/runtime/internal'
import { gateRequest } from './gate/gate'
import { answerProbe } from './gate/probes'
import { startStores } from './gate/stores'
import { sendGatewayError, toGatewayError } from './http/errors'
import type { RequestScope } from './http/scope'
import { useRouteDecider } from './http/route-decider'
import { reloadRoutes, useGatewayConfig } from './ops/config'
import { beginDrain, isShuttingDown, workInFlight } from './ops/drain'
import { flushLogs, useLogger } from './ops/logger'
import { runUnder } from './ops/tracing/spans'
import { startTracing, stopTracing } from './ops/tracing/tracing'
import { proxyApiRequest } from './proxy/api-proxy'
import { handleUpgrade, refusedAppHandshake, tunnelsUpgrade } from './proxy/ws-tunnel'
import { journalPendingRevocations } from './session/revocations'
import { answerVerify } from './verify/forward-auth'

/** Request headers must arrive within this time. */
const HEADERS_TIMEOUT_MS = 60_000
/** The app's and the gateway's 'close' hooks (Redis, the metrics listener) get this long at the end of a drain. */
const CLOSE_HOOKS_MS = 2_000

// Tracing, when the OTEL_* variables ask for it (docs/operations.md, Tracing; started by the gateway's plugin, before
// the provider's discovery): the server listens once it is on. Nothing of OpenTelemetry is loaded otherwise.
const tracingStarted = startTracing().then((started) => {
  if (started) log.info({ type: 'tracing' }, 'OpenTelemetry: đã bật trace (OTLP/HTTP).')
}, (error: Error) => log.error({ type: 'tracing', error: error.message }, 'OpenTelemetry: không bật được trace, phục vụ tiếp không có trace.'))
// The plugins run here: the logger, the whole configuration checked (an invalid APP_* value ends the start).
const nitroApp = useNitroApp()
const { config } = useGatewayConfig()
const log = useLogger()

/**
 * No total-time cap on a request, so an upload through /api runs as long as bytes move (Node's default cuts it at
 * 300 s), and 60 s for the headers. /auth bodies have their own limit (APP_AUTH_BODY_TIMEOUT, http/json-body.ts).
 * An idle keep-alive connection is kept APP_KEEP_ALIVE_TIMEOUT seconds (65), not Node's 5: a proxy in front that
 * reuses its idle connections for 60 s would otherwise send requests on connections the gateway is closing
 * (docs/operations.md, Keep-alive).
 */
const options: ServerOptions = { requestTimeout: 0, headersTimeout: HEADERS_TIMEOUT_MS, keepAliveTimeout: config.keepAliveTimeoutSeconds * 1000 }
const cert = process.env.NITRO_SSL_CERT
const key = process.env.NITRO_SSL_KEY
const toNitro = toNodeListener(nitroApp.h3App)

/** Hands a request to who serves it, as the gate decided. */
function dispatch(req: IncomingMessage, res: ServerResponse, scope: RequestScope): void {
  if (scope.route === 'proxy') proxyApiRequest(req, res, scope)
  else if (scope.route === 'nitro') toNitro(req, res)
  else if (scope.route === 'probe') void answerProbe(scope.probe!, req, res)
  else if (scope.route === 'verify') answerVerify(req, res, scope.client)
}

/**
 * Every request: the gate works out its scope and answers its refusals; the proxy, Nitro, a probe or forward auth
 * serve the rest (with tracing on, under the request's server span).
 */
function serve(req: IncomingMessage, res: ServerResponse): void {
  try {
    const scope = gateRequest(req, res)
    // The proxy passes its span along itself (proxy/api-proxy.ts): the current span is for the calls Nitro's routes make.
    const span = scope.route === 'proxy' ? undefined : scope.exchange.span
    if (span) runUnder(span, () => dispatch(req, res, scope))
    else dispatch(req, res, scope)
  }
  catch (error) {
    // Nothing above catches for us (a throw here would end the process): the contract's 500, logged without a stack.
    if (!res.headersSent) sendGatewayError(res, toGatewayError(error))
    else res.destroy()
  }
}

const server = cert && key ? new HttpsServer({ ...options, cert, key }, serve) : new HttpServer(options, serve)
const { requestTimeout, headersTimeout, keepAliveTimeout } = server
log.info({ type: 'server', requestTimeout, headersTimeout, keepAliveTimeout }, 'giới hạn thời gian của máy chủ HTTP (ms, 0: không giới hạn)')

// WebSocket handshakes: under /api/** the tunnel to the backend (proxy/ws-tunnel.ts); elsewhere the app's own
// WebSocket routes when it turned Nitro's WebSocket support on, else the contract's 404.
const decide = useRouteDecider()
const appWebSockets = import.meta._websocket ? wsAdapter(nitroApp.h3App.websocket) : undefined
/** Whether a route of the app has WebSocket hooks for this path (Nitro would upgrade any path, hooks or not). */
async function appHasWebSocket(req: IncomingMessage): Promise<boolean> {
  const resolve = nitroApp.h3App.websocket.resolve as ((info: { url: string }) => Promise<object | undefined>) | undefined
  const hooks = await resolve?.({ url: req.url ?? '/' }).catch(() => undefined)
  return !!hooks && Object.keys(hooks).length > 0
}
server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
  if (!appWebSockets || tunnelsUpgrade(req, decide)) return handleUpgrade(req, socket, head, decide)
  // Node took its own error listener off the socket: a client that resets it meanwhile must not be an uncaught error.
  socket.on('error', () => socket.destroy())
  void appHasWebSocket(req)
    .then((owned) => {
      if (!owned) return handleUpgrade(req, socket, head, decide)
      if (!refusedAppHandshake(req, socket)) return appWebSockets.handleUpgrade(req, socket, head)
    })
    .catch(() => socket.destroy())
})

// An address that cannot be taken ends the start (Nitro's entry would log it and go on, serving nothing).
server.on('error', (error: NodeJS.ErrnoException) => {
  log.fatal({ error: error.message, code: error.code }, `không mở được cổng HTTP (${error.code ?? error.message}).`)
  flushLogs()
  process.exit(1)
})
const port = Number(process.env.NITRO_PORT || process.env.PORT || 3000)
const host = process.env.NITRO_HOST || process.env.HOST || undefined
const socketPath = process.env.NITRO_UNIX_SOCKET
if (!socketPath && !(Number.isInteger(port) && port >= 0 && port <= 65535)) {
  log.fatal(`PORT: "${process.env.NITRO_PORT || process.env.PORT}" không phải cổng TCP (0–65535).`)
  flushLogs()
  process.exit(1)
}
void tracingStarted.then(() => server.listen(socketPath ? { path: socketPath } : { port, host }, () => {
  const address = server.address() as AddressInfo | string
  if (typeof address === 'string') return log.info(`Listening on unix socket ${address}`)
  const baseURL = (useRuntimeConfig().app.baseURL || '').replace(/\/$/, '')
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address
  log.info(`Listening on ${cert && key ? 'https' : 'http'}://${shown}:${address.port}${baseURL}`)
}))

// A rejection nobody handled is logged and serving goes on (as Nitro's entry does); an exception nobody caught
// leaves the process in a state no one knows: logged as fatal, the log flushed, exit 1 (the orchestrator restarts it).
// Both reach the app's 'error' hooks (error trackers) as Nitro's entry lets them; the revocations Redis never took
// are journalled and said (a logout is never lost silently, crash or not).
process.on('unhandledRejection', (reason) => {
  log.error({ error: reason instanceof Error ? reason.message : String(reason) }, 'promise bị từ chối mà không ai xử lý')
  nitroApp.captureError(reason instanceof Error ? reason : new Error(String(reason)), { tags: ['unhandledRejection'] })
})
process.on('uncaughtException', (error) => {
  log.fatal({ error: error.message, stack: error.stack }, 'lỗi không ai bắt: dừng tiến trình')
  try {
    nitroApp.captureError(error, { tags: ['uncaughtException'] })
    journalPendingRevocations()
  }
  finally {
    flushLogs()
    process.exit(1)
  }
})

/**
 * The drain, on SIGTERM or SIGINT: the server stops accepting, idle keep-alive connections close (and those that go
 * idle meanwhile), /readyz answers 503 and every answer closes its connection, tunnels end; requests, uploads and
 * streams in flight finish for up to APP_SHUTDOWN_TIMEOUT seconds. Then the 'close' hooks run (bounded), the log is
 * flushed and the process exits 0. A second signal, or the time limit, ends it at once.
 */
let exiting = false
async function exit(reason: string): Promise<void> {
  if (exiting) return
  exiting = true
  const inFlight = workInFlight()
  if (inFlight > 0) log.warn({ inFlight, reason }, `dừng: cắt ${inFlight} yêu cầu còn dở (${reason}).`)
  else log.info({ reason }, 'dừng: mọi yêu cầu đã xong.')
  // The spans still buffered go out beside the hooks, within the same bound.
  await Promise.race([Promise.all([nitroApp.hooks.callHook('close'), stopTracing(CLOSE_HOOKS_MS)]), new Promise(resolve => setTimeout(resolve, CLOSE_HOOKS_MS).unref())]).catch(() => {})
  flushLogs()
  process.exit(0)
}

function drain(signal: NodeJS.Signals): void {
  if (isShuttingDown()) return void exit(`${signal} lần hai`)
  const timeoutSeconds = config.shutdownTimeoutSeconds
  log.info({ signal, inFlight: workInFlight(), timeoutSeconds }, `nhận ${signal}: ngừng nhận kết nối, chờ ${workInFlight()} yêu cầu còn dở tối đa ${timeoutSeconds} giây.`)
  server.close()
  server.closeIdleConnections()
  setInterval(() => server.closeIdleConnections(), 250).unref()
  setTimeout(() => void exit('hết thời gian'), timeoutSeconds * 1000).unref()
  beginDrain(() => void exit('xong'))
}
process.on('SIGTERM', drain)
process.on('SIGINT', drain)

// SIGHUP re-reads APP_API_ROUTES_FILE (docs/routes.md): requests from then on take the new routes, those in flight
// finish with theirs and no connection is dropped; a file that does not check is logged and the old routes kept.
// Without a routes file SIGHUP stays Node's own (the process ends), as before.
if (config.apiRoutesFile) {
  process.on('SIGHUP', () => {
    const routes = reloadRoutes()
    if (routes instanceof Error) log.error({ type: 'routes' }, `không nạp lại được APP_API_ROUTES_FILE, giữ các tuyến cũ: ${routes.message}`)
    else log.info({ type: 'routes', routes: routes.length }, `đã nạp lại APP_API_ROUTES_FILE: ${routes.length} tuyến.`)
  })
}

// The stores (login limits, revocations; started by plugins/gateway-config.ts) are awaited: the server says when it is
// ready, and /readyz answers 503 `starting` until then. Requests are served meanwhile, as during a Redis outage.
void startStores().then(() => log.info({ type: 'ready' }, 'sẵn sàng: kho đếm đăng nhập và thu hồi phiên đã kết nối.'))

if (import.meta._tasks) startScheduleRunner()

export default {}
