// @ts-check
/**
 * `node bench/otlp-sink.mjs PORT`: an OTLP/HTTP collector that keeps nothing, for the tracing scenario: every POST
 * (the gateway's span batches to /v1/traces) is read to its end and answered 200 `{}`. Loopback only.
 */
import { createServer } from 'node:http'

const port = Number(process.argv[2])
let spansBytes = 0
createServer((req, res) => {
  req.on('data', (chunk) => {
    spansBytes += chunk.length
  })
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'x-received-bytes': String(spansBytes) })
    res.end('{}')
  })
}).listen(port, '127.0.0.1')
