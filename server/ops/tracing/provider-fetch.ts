import type * as client from 'openid-client'
import { providerOperation, withoutQuery, type ProviderEndpoints } from '../../core/ops/tracing'
import { injectTraceHeaders, traced } from './spans'
import { useTracing } from './holder'

/** The grant type of a token request's form body (the only thing of a body a span's name reads). */
function grantTypeOf(body: client.CustomFetchOptions['body']): string | null {
  if (body instanceof URLSearchParams) return body.get('grant_type')
  if (typeof body === 'string') return new URLSearchParams(body).get('grant_type')
  return null
}

/**
 * With tracing on, openid-client's fetch (its `customFetch`): each call to the provider is a client span named by
 * what it is for (`oidc discovery`, `oidc token` for a login's code, `oidc refresh`, `oidc userinfo`,
 * `oidc revocation`, `oidc jwks`: core/ops/tracing.ts providerOperation) with the method, the address without its
 * query and the status; the provider receives its `traceparent`. Never a header or a body (codes, tokens, the client
 * secret). `endpoints` gives the discovery document's endpoints once known. Undefined with tracing off: openid-client
 * keeps its own fetch.
 */
export function providerFetch(endpoints: () => ProviderEndpoints | undefined): client.CustomFetch | undefined {
  if (!useTracing()) return undefined
  return (url, options) => {
    const operation = providerOperation(url, endpoints(), grantTypeOf(options.body))
    const address = new URL(withoutQuery(url))
    const attributes = { 'http.request.method': options.method, 'server.address': address.host, 'url.path': address.pathname }
    // The start's discovery (and its keys) is a trace of its own; any other call belongs to a request's.
    const root = operation === 'discovery' || operation === 'jwks'
    return traced(`oidc ${operation}`, 'client', attributes, async (span) => {
      const headers = { ...options.headers }
      if (span) injectTraceHeaders(span, headers)
      const response = await fetch(url, { ...options, headers } as RequestInit)
      span?.setAttribute('http.response.status_code', response.status)
      return response
    }, root)
  }
}
