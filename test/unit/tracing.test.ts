import { describe, expect, it } from 'vitest'
import { providerOperation, tracingWanted, withoutQuery } from '../../server/core/ops/tracing'

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
