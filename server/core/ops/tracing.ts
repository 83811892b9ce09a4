/**
 * Tracing's decisions that need no SDK: whether the OTEL_* variables turn it on, and what a call to the OpenID
 * Provider is. Pure.
 */

/** The environment (OTEL_* variables); the SDK and the exporter read the others themselves. */
export type TracingEnv = Readonly<Record<string, string | undefined>>

/**
 * Whether tracing is on: an OTLP endpoint is given (OTEL_EXPORTER_OTLP_ENDPOINT or _TRACES_ENDPOINT), the SDK is not
 * disabled (OTEL_SDK_DISABLED=true) and the traces exporter is OTLP (OTEL_TRACES_EXPORTER unset, or naming `otlp`;
 * `none` or any other exporter alone turns it off: the gateway ships the OTLP/HTTP one only).
 */
export function tracingWanted(env: TracingEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false
  const exporters = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase()
  if (exporters && !exporters.split(',').some(name => name.trim() === 'otlp')) return false
  return !!(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim())
}

/** A call of the gateway to the OpenID Provider, by what it is for (the span's name: `oidc <operation>`). */
export type ProviderOperation = 'discovery' | 'jwks' | 'token' | 'refresh' | 'userinfo' | 'revocation' | 'other'

/** The provider's endpoints as its discovery document names them. */
export interface ProviderEndpoints {
  token_endpoint?: string
  userinfo_endpoint?: string
  revocation_endpoint?: string
  jwks_uri?: string
}

/** The address without its query and fragment (an address's query may carry anything; never written to a span). */
export function withoutQuery(url: string): string {
  const end = url.search(/[?#]/)
  return end === -1 ? url : url.slice(0, end)
}

/**
 * What a request to the provider is for, by its address (the discovery document's endpoints; the well-known path
 * before discovery) and, at the token endpoint, its grant type: `refresh_token` is a renewal, any other a login's
 * code exchange. Only the grant type is read of the body.
 */
export function providerOperation(url: string, endpoints: ProviderEndpoints | undefined, grantType: string | null | undefined): ProviderOperation {
  const address = withoutQuery(url)
  if (address.endsWith('/.well-known/openid-configuration')) return 'discovery'
  if (!endpoints) return 'other'
  if (address === endpoints.token_endpoint) return grantType === 'refresh_token' ? 'refresh' : 'token'
  if (address === endpoints.userinfo_endpoint) return 'userinfo'
  if (address === endpoints.revocation_endpoint) return 'revocation'
  if (address === endpoints.jwks_uri) return 'jwks'
  return 'other'
}
