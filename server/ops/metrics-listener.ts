import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { NitroApp } from 'nitropack/types'
import type { Logger } from './logger'
import { enableMetrics } from './metrics'

/**
 * Serves the metrics in Prometheus' text format at GET /metrics on their own listener (APP_METRICS_PORT on
 * APP_METRICS_HOST, loopback by default: it has no authentication), never on the public port. A port that cannot be bound stops the start, naming the variable.
 */
export function startMetricsListener(nitroApp: NitroApp, options: { port: number, host: string }, log: Logger): void {
  const { registry } = enableMetrics()
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: metrics are at /metrics.\n')
      return
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end()
      return
    }
    registry.metrics().then(
      text => res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : text),
      (error: unknown) => {
        log.error({ error: error instanceof Error ? error.message : String(error) }, 'không đọc được số liệu')
        res.writeHead(500).end()
      },
    )
  })
  server.on('error', (error: NodeJS.ErrnoException) => {
    log.fatal({ error: error.message }, `APP_METRICS_PORT: không mở được ${options.host}:${options.port} (${error.code ?? error.message}).`)
    process.exit(1)
  })
  server.listen(options.port, options.host, () => {
    // The address the socket really holds, read back from it.
    const { address, port } = server.address() as AddressInfo
    log.info({ port, host: address }, `số liệu Prometheus tại http://${address}:${port}/metrics`)
  })
  nitroApp.hooks.hook('close', () => new Promise<void>(resolve => server.close(() => resolve())))
}
