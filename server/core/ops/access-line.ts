/**
 * The access line of one exchange, and its JSON text. Pure.
 *
 * Every request writes one, so its JSON is a fixed template (keys in the object's order) rather than a generic
 * serializer walking the object (~4.5 µs a line through pino's, on the bench machine). String values come from the
 * request (method, path, request id, forwarded address) and are written by jsonString.
 */
export interface AccessLine {
  type: 'access'
  method: string
  /** Without the query (see loggedPath). */
  path: string
  /** 0 when no answer started. */
  status: number
  /** Milliseconds, two decimals. */
  ms: number
  /** Bytes written to the client for this exchange, headers included. */
  bytes: number
  requestId: string
  client: string
  group: string
  /** The route of the routes file that served a proxied exchange ('default': APP_API_PROXY_TARGET); only with a routes file. */
  route?: string
  /** The client left before the answer was complete. */
  aborted?: true
  /** A WebSocket tunnel (written when it closes), with the bytes the client sent through it. */
  tunnel?: true
  bytesIn?: number
  /** With tracing on and the request sampled: its trace and server span (W3C ids, lower-case hex). */
  traceId?: string
  spanId?: string
}

/** Printable ASCII without `"` and `\`: a string of only these is its own JSON text between quotes. */
const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/

/**
 * A string as JSON text, as JSON.stringify writes it. The usual case (a path, an id, an address in printable ASCII)
 * is quoted as it is: one regular-expression test instead of JSON.stringify's generic call (a whole line, written as
 * the gateway writes it: 2.0–2.7 µs with JSON.stringify, 0.9–1.2 µs with this, in a micro-run). Anything else
 * (quotes, backslashes, control or non-ASCII characters) goes through JSON.stringify.
 */
export function jsonString(value: string): string {
  return PLAIN_ASCII.test(value) ? `"${value}"` : JSON.stringify(value)
}

/** A number as JSON: NaN and the infinities, which JSON has no words for, are null (as JSON.stringify writes them). */
function num(value: number): number | null {
  return Number.isFinite(value) ? value : null
}

/** The line's fields as JSON object members, each preceded by a comma (for a logger to wrap in its own line). */
export function accessLineMembers(line: AccessLine): string {
  return `,"type":"access","method":${jsonString(line.method)},"path":${jsonString(line.path)},"status":${num(line.status)}`
    + `,"ms":${num(line.ms)},"bytes":${num(line.bytes)},"requestId":${jsonString(line.requestId)},"client":${jsonString(line.client)}`
    + `,"group":${jsonString(line.group)}${line.route === undefined ? '' : `,"route":${jsonString(line.route)}`}${line.aborted ? ',"aborted":true' : ''}`
    + `${line.tunnel ? `,"tunnel":true,"bytesIn":${num(line.bytesIn ?? 0)}` : ''}`
    + `${line.traceId === undefined ? '' : `,"traceId":${jsonString(line.traceId)},"spanId":${jsonString(line.spanId ?? '')}`}`
}
