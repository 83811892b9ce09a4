/**
 * Tracing's decisions that need no SDK: whether the OTEL_* variables turn it on, which head sampler they name, and
 * what a call to the OpenID Provider is. Pure.
 */

/**
 * The OpenTelemetry packages the export thread loads by file path (server/ops/tracing/export-thread.ts): no import
 * names them, so the layer names them to the build's file trace (nuxt.config.ts), which copies them into the built
 * server's node_modules.
 */
export const EXPORT_THREAD_PACKAGES = {
  api: '@opentelemetry/api',
  core: '@opentelemetry/core',
  resources: '@opentelemetry/resources',
  sdk: '@opentelemetry/sdk-trace-base',
  exporter: '@opentelemetry/exporter-trace-otlp-http',
} as const

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

/**
 * The head sampler OTEL_TRACES_SAMPLER and _ARG name: what the root of a trace (a request without a trusted parent)
 * gets, and whether a parent's own decision is followed instead (`parentbased_*`).
 */
export interface SamplerChoice {
  root: 'always_on' | 'always_off' | 'traceidratio'
  /** The share of trace ids sampled (`traceidratio`), 0 to 1. */
  ratio: number
  parentBased: boolean
}

const SAMPLERS = new Map<string, SamplerChoice>(Object.entries({
  always_on: { root: 'always_on', ratio: 1, parentBased: false },
  always_off: { root: 'always_off', ratio: 0, parentBased: false },
  traceidratio: { root: 'traceidratio', ratio: 1, parentBased: false },
  parentbased_always_on: { root: 'always_on', ratio: 1, parentBased: true },
  parentbased_always_off: { root: 'always_off', ratio: 0, parentBased: true },
  parentbased_traceidratio: { root: 'traceidratio', ratio: 1, parentBased: true },
} satisfies Record<string, SamplerChoice>))

/**
 * The sampler the OTEL_* variables name, read as OpenTelemetry's SDK reads them (its `buildSamplerFromEnv`): unset,
 * blank or unknown, `parentbased_always_on`; a ratio's _ARG blank, not a number or outside 0..1 counts as 1. The
 * gateway builds this sampler itself and asks it for each span its request thread starts (ops/tracing/recorder.ts).
 */
export function samplerChoice(env: TracingEnv): SamplerChoice {
  const choice = SAMPLERS.get(env.OTEL_TRACES_SAMPLER ?? '') ?? SAMPLERS.get('parentbased_always_on')!
  if (choice.root !== 'traceidratio') return choice
  const raw = env.OTEL_TRACES_SAMPLER_ARG
  const ratio = raw === undefined || raw.trim() === '' ? Number.NaN : Number(raw)
  return { ...choice, ratio: ratio >= 0 && ratio <= 1 ? ratio : 1 }
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
