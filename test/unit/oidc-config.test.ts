import { describe, expect, it } from 'vitest'
import { overlayEnv } from '../../server/core/config/coerce'
import { parseGatewayConfig } from '../../server/core/config/config'
import { chooseTokenAuthMethod } from '../../server/core/config/oidc-config'
import { ConfigError } from '../../server/core/config/types'
import { GATEWAY_DEFAULTS } from '../../server/core/config/defaults'
import { deriveSealKeys, sealSession, unsealSession } from '../../server/core/session/seal'

const SECRET = 'x'.repeat(32)
const parse = (env: Record<string, string>) => parseGatewayConfig(overlayEnv(GATEWAY_DEFAULTS, env), [SECRET])
const OIDC = { APP_AUTH_KIND: 'oidc', APP_OIDC_ISSUER: 'https://sso.example/realms/acme', APP_OIDC_CLIENT_ID: 'orders-web' }

describe('APP_AUTH_KIND=oidc', () => {
  it('is off by default: the contract IAM, its mapping unchanged', () => {
    const config = parse({})
    expect(config.kind).toBe('iam')
    expect(config.oidc).toBeUndefined()
    expect(config.mapping.id).toBe('body.userId')
  })

  it('reads the provider\'s settings with their defaults', () => {
    expect(parse(OIDC).oidc).toEqual({
      issuer: 'https://sso.example/realms/acme',
      clientId: 'orders-web',
      clientSecret: '',
      tokenAuthMethod: '',
      clientKeyFile: '',
      clientKeyId: '',
      scopes: 'openid profile email offline_access',
      redirectUri: '',
      postLogoutRedirectUri: '',
      autoRedirect: false,
      par: false,
      acrValues: [],
      maxAge: undefined,
    })
    expect(parse({ ...OIDC, APP_OIDC_SCOPES: ' openid  email ', APP_OIDC_AUTO_REDIRECT: '1', APP_OIDC_CLIENT_SECRET: 's3cret', APP_OIDC_PAR: 'true' }).oidc)
      .toMatchObject({ scopes: 'openid email', autoRedirect: true, clientSecret: 's3cret', par: true })
    expect(parse({ ...OIDC, APP_OIDC_ACR_VALUES: 'mfa hwk', APP_OIDC_MAX_AGE: '3600' }).oidc).toMatchObject({ acrValues: ['mfa', 'hwk'], maxAge: 3600 })
  })

  it('maps the standard claims where APP_AUTH_MAPPING_* is left alone, and takes what is set', () => {
    const config = parse({ ...OIDC, APP_AUTH_MAPPING_ROLES: 'realm_access.roles' })
    expect(config.mapping).toMatchObject({ id: 'sub', name: 'name', email: 'email', roles: 'realm_access.roles', permissions: 'permissions', permissionType: '' })
  })

  it.each([
    [{ APP_OIDC_ISSUER: '' }, 'APP_OIDC_ISSUER chưa cấu hình'],
    [{ APP_OIDC_CLIENT_ID: '' }, 'APP_OIDC_CLIENT_ID chưa cấu hình'],
    [{ APP_OIDC_ISSUER: 'http://sso.example' }, 'APP_OIDC_ISSUER phải là địa chỉ https://'],
    [{ APP_OIDC_ISSUER: 'not a url' }, 'APP_OIDC_ISSUER không phải địa chỉ URL'],
    [{ APP_OIDC_ISSUER: 'https://user:pw@sso.example' }, 'không được chứa thông tin đăng nhập'],
    [{ APP_OIDC_REDIRECT_URI: 'http://gateway.example/auth/callback' }, 'APP_OIDC_REDIRECT_URI phải là địa chỉ https://'],
    [{ APP_OIDC_SCOPES: 'profile email' }, 'APP_OIDC_SCOPES phải có \'openid\''],
    [{ APP_OIDC_AUTO_REDIRECT: 'maybe' }, 'APP_OIDC_AUTO_REDIRECT phải là true hoặc false'],
    [{ APP_OIDC_PAR: 'sometimes' }, 'APP_OIDC_PAR phải là true hoặc false'],
    [{ APP_OIDC_ACR_VALUES: 'mfa "x"' }, 'APP_OIDC_ACR_VALUES phải là các giá trị acr'],
    [{ APP_OIDC_MAX_AGE: '-5' }, 'APP_OIDC_MAX_AGE phải là số giây nguyên'],
    [{ APP_AUTH_MOCK: 'true' }, 'APP_AUTH_MOCK=true không dùng được với APP_AUTH_KIND=oidc'],
    [{ APP_AUTH_KIND: 'saml' }, 'APP_AUTH_KIND phải là một trong iam, oidc'],
    [{ APP_OIDC_TOKEN_AUTH_METHOD: 'client_secret_jwt' }, 'APP_OIDC_TOKEN_AUTH_METHOD phải là một trong private_key_jwt, client_secret_basic, client_secret_post, none'],
    [{ APP_OIDC_TOKEN_AUTH_METHOD: 'private_key_jwt', APP_OIDC_CLIENT_SECRET: 's' }, 'APP_OIDC_TOKEN_AUTH_METHOD=private_key_jwt cần APP_OIDC_CLIENT_KEY_FILE'],
    [{ APP_OIDC_TOKEN_AUTH_METHOD: 'client_secret_post' }, 'APP_OIDC_TOKEN_AUTH_METHOD=client_secret_post cần APP_OIDC_CLIENT_SECRET'],
  ])('refuses %j, naming the variable', (env, message) => {
    expect(() => parse({ ...OIDC, ...env })).toThrow(ConfigError)
    expect(() => parse({ ...OIDC, ...env })).toThrow(message)
  })

  it('takes plain http for a loopback provider only (development)', () => {
    expect(parse({ ...OIDC, APP_OIDC_ISSUER: 'http://127.0.0.1:4030' }).oidc?.issuer).toBe('http://127.0.0.1:4030')
    // The whole of 127.0.0.0/8: a provider on 127.0.0.2 keeps its cookies apart from a gateway on 127.0.0.1.
    expect(parse({ ...OIDC, APP_OIDC_ISSUER: 'http://127.0.0.2:4030' }).oidc?.issuer).toBe('http://127.0.0.2:4030')
    expect(parse({ ...OIDC, APP_OIDC_ISSUER: 'http://[::1]:4030', APP_OIDC_REDIRECT_URI: 'http://localhost:3000/auth/callback' }).oidc?.redirectUri).toBe('http://localhost:3000/auth/callback')
    for (const issuer of ['http://127.0.0.1.evil.com', 'http://localhost.evil', 'http://0x7f.1']) {
      expect(() => parse({ ...OIDC, APP_OIDC_ISSUER: issuer })).toThrow('APP_OIDC_ISSUER phải là địa chỉ https://')
    }
  })
})

describe('the client authentication method (APP_OIDC_TOKEN_AUTH_METHOD, else the provider\'s list)', () => {
  const ALL = ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none']
  it.each([
    // configuration, the provider's token_endpoint_auth_methods_supported, the method, whether the provider lists it
    [{ clientSecret: 's' }, ALL, 'client_secret_basic', true],
    [{ clientSecret: 's' }, undefined, 'client_secret_basic', true],
    [{ clientSecret: 's' }, ['client_secret_post', 'private_key_jwt'], 'client_secret_post', true],
    [{ clientKeyFile: '/k.pem' }, ALL, 'private_key_jwt', true],
    [{ clientKeyFile: '/k.pem', clientSecret: 's' }, ALL, 'private_key_jwt', true],
    [{ clientKeyFile: '/k.pem', clientSecret: 's' }, ['client_secret_basic'], 'client_secret_basic', true],
    [{}, ALL, 'none', true],
    [{}, ['client_secret_basic'], 'none', false],
    [{ clientKeyFile: '/k.pem' }, ['client_secret_basic'], 'private_key_jwt', false],
    [{ clientSecret: 's', tokenAuthMethod: 'client_secret_post' as const }, ['client_secret_basic'], 'client_secret_post', false],
    [{ clientSecret: 's', tokenAuthMethod: 'client_secret_basic' as const }, ALL, 'client_secret_basic', true],
  ])('%j with the provider listing %j: %s (listed: %s)', (settings, supported, method, listed) => {
    expect(chooseTokenAuthMethod({ tokenAuthMethod: '', clientSecret: '', clientKeyFile: '', ...settings }, supported)).toEqual({ method, listed })
  })
})

describe('the session keys of an OIDC gateway', () => {
  it('are its own: a contract-IAM cookie is no session there, nor the other way round', () => {
    const payload = { user: { id: 'u', name: 'n', email: 'e', roles: [], permissions: [] }, iat: Date.now(), sid: 'abcdefghijklmnop' }
    const iam = deriveSealKeys([SECRET], 'session')
    const oidc = deriveSealKeys([SECRET], 'session-oidc')
    expect(unsealSession(sealSession(payload, iam), oidc)).toBeNull()
    expect(unsealSession(sealSession(payload, oidc), iam)).toBeNull()
    expect(unsealSession(sealSession(payload, oidc), oidc)).toEqual(payload)
  })
})
