import type { IncomingMessage } from 'node:http'

/** Adds to (or changes) the headers of one proxied request; runs synchronously, after the gateway's own rules. */
export type ProxyRequestHook = (headers: Record<string, string | string[]>, req: IncomingMessage) => void

const hooks: ProxyRequestHook[] = []

/**
 * For the app's server code (a Nitro plugin): a function called for every request the `/api/**` proxy sends, to add
 * headers (a tenant id, a trace header). Nitro route rules and server middleware do not run for proxied requests;
 * this does. The hook sees the headers after the gateway's rules (cookies and client Authorization gone, Bearer set),
 * so what it sets is sent as it is.
 */
export function onProxyRequest(hook: ProxyRequestHook): void {
  hooks.push(hook)
}

/** Runs the app's hooks on a proxied request's headers (nothing to do, and no cost, when there are none). */
export function runProxyRequestHooks(headers: Record<string, string | string[]>, req: IncomingMessage): void {
  for (const hook of hooks) hook(headers, req)
}
