import { describe, expect, it } from 'vitest'
import { providerOperation, samplerChoice, tracingWanted, withoutQuery } from '../../server/core/ops/tracing'
import { randomHexId } from '../../server/ops/tracing/ids'

describe('tracingWanted: the OTEL_* variables that turn tracing on', () => {
  const endpoint = 'http://collector:4318'
  it.each([
    [{}, false],
    [{ OTEL_SERVICE_NAME: 'gateway' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${endpoint}/v1/traces` }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: 'true' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: 'TRUE' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: 'false' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_EXPORTER: 'none' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_EXPORTER: 'console' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_EXPORTER: 'otlp' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_EXPORTER: 'console, otlp' }, true],
  ])('%j: %s', (env, on) => {
    expect(tracingWanted(env as Record<string, string>)).toBe(on)
  })
})

describe('samplerChoice: the head sampler OTEL_TRACES_SAMPLER and _ARG name, read as the SDK reads them', () => {
  const on = { root: 'always_on', ratio: 1, parentBased: true }
  it.each([
    [{}, on],
    [{ OTEL_TRACES_SAMPLER: '' }, on],
    [{ OTEL_TRACES_SAMPLER: 'jaeger_remote' }, on],
    [{ OTEL_TRACES_SAMPLER: 'toString' }, on],
    [{ OTEL_TRACES_SAMPLER: 'ALWAYS_OFF' }, on],
    [{ OTEL_TRACES_SAMPLER: 'always_on' }, { root: 'always_on', ratio: 1, parentBased: false }],
    [{ OTEL_TRACES_SAMPLER: 'always_off' }, { root: 'always_off', ratio: 0, parentBased: false }],
    [{ OTEL_TRACES_SAMPLER: 'parentbased_always_off' }, { root: 'always_off', ratio: 0, parentBased: true }],
    [{ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }, { root: 'traceidratio', ratio: 0.1, parentBased: true }],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: ' 0.25 ' }, { root: 'traceidratio', ratio: 0.25, parentBased: false }],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }, { root: 'traceidratio', ratio: 0, parentBased: false }],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio' }, { root: 'traceidratio', ratio: 1, parentBased: false }],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: ' ' }, { root: 'traceidratio', ratio: 1, parentBased: false }],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: 'half' }, { root: 'traceidratio', ratio: 1, parentBased: false }],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' }, { root: 'traceidratio', ratio: 1, parentBased: false }],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '-0.1' }, { root: 'traceidratio', ratio: 1, parentBased: false }],
    [{ OTEL_TRACES_SAMPLER: 'always_on', OTEL_TRACES_SAMPLER_ARG: '0.1' }, { root: 'always_on', ratio: 1, parentBased: false }],
  ])('%j', (env, choice) => {
    expect(samplerChoice(env as Record<string, string>)).toEqual(choice)
  })
})

describe('trace and span ids', () => {
  it('are lowercase hex of 16 and 8 bytes, and do not repeat (across refills of the pool)', () => {
    const ids = new Set<string>()
    for (let i = 0; i < 1000; i++) {
      const traceId = randomHexId(16)
      const spanId = randomHexId(8)
      expect(traceId).toMatch(/^[0-9a-f]{32}$/)
      expect(spanId).toMatch(/^[0-9a-f]{16}$/)
      ids.add(traceId).add(spanId)
    }
    expect(ids.size).toBe(2000)
  })
})

describe('providerOperation: what a call to the OpenID Provider is for', () => {
  const endpoints = {
    token_endpoint: 'https://id.example/token',
    userinfo_endpoint: 'https://id.example/me',
    revocation_endpoint: 'https://id.example/token/revocation',
    jwks_uri: 'https://id.example/jwks',
  }
  it.each([
    ['https://id.example/.well-known/openid-configuration', undefined, null, 'discovery'],
    ['https://id.example/realms/a/.well-known/openid-configuration', endpoints, null, 'discovery'],
    ['https://id.example/token', endpoints, 'authorization_code', 'token'],
    ['https://id.example/token', endpoints, 'refresh_token', 'refresh'],
    ['https://id.example/me', endpoints, null, 'userinfo'],
    ['https://id.example/me?schema=openid', endpoints, null, 'userinfo'],
    ['https://id.example/token/revocation', endpoints, null, 'revocation'],
    ['https://id.example/jwks', endpoints, null, 'jwks'],
    ['https://id.example/token', undefined, 'refresh_token', 'other'],
    ['https://id.example/elsewhere', endpoints, null, 'other'],
  ] as const)('%s (%s grant %s): %s', (url, known, grant, operation) => {
    expect(providerOperation(url, known, grant)).toBe(operation)
  })
})

describe('withoutQuery', () => {
  it.each([
    ['/auth/callback?code=abc&state=def', '/auth/callback'],
    ['/a#frag?x', '/a'],
    ['/plain', '/plain'],
    ['https://id.example/me?x=1', 'https://id.example/me'],
  ])('%s -> %s', (url, path) => {
    expect(withoutQuery(url)).toBe(path)
  })
})
