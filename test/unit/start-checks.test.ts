import { describe, expect, it } from 'vitest'
import { parseGatewayConfig } from '../../server/core/config/config'
import { missingSettingLine, missingSettings, settingWarnings } from '../../server/core/config/start-checks'
import type { RawGatewayConfig } from '../../server/core/config/types'

const SECRET = 'x'.repeat(32)
const OIDC = { kind: 'oidc', mock: false }
const OIDC_SETTINGS = { issuer: 'https://sso.example/realms/acme', clientId: 'orders-web' }
const parse = (raw: RawGatewayConfig) => parseGatewayConfig(raw, [SECRET])

describe('required settings that are missing', () => {
  it.each<[string, RawGatewayConfig, string[]]>([
    ['nothing set', {}, ['APP_AUTH_BASE_URL', 'APP_API_PROXY_TARGET']],
    ['both set', { auth: { baseURL: 'http://iam' }, apiProxyTarget: 'http://api' }, []],
    ['no IAM', { apiProxyTarget: 'http://api' }, ['APP_AUTH_BASE_URL']],
    ['no backend', { auth: { baseURL: 'http://iam' } }, ['APP_API_PROXY_TARGET']],
    ['mock mode needs no IAM', { auth: { mock: 'true' }, apiProxyTarget: 'http://api' }, []],
    ['mock mode still needs a backend', { auth: { mock: 'true' } }, ['APP_API_PROXY_TARGET']],
    ['OpenID Connect needs no IAM base address', { auth: OIDC, oidc: OIDC_SETTINGS, apiProxyTarget: 'http://api' }, []],
    ['a gateway without a backend (forward auth alone)', { auth: { baseURL: 'http://iam' }, apiProxy: 'false' }, []],
    ['APP_API_PROXY=true is the default', { auth: { baseURL: 'http://iam' }, apiProxy: 'true' }, ['APP_API_PROXY_TARGET']],
    ['a routes file names the backends: the default one is optional', { auth: { baseURL: 'http://iam' }, apiRoutesFile: '/etc/gateway/routes.yaml' }, []],
  ])('%s', (_case, raw, missing) => {
    expect(missingSettings(parse(raw))).toEqual(missing)
  })

  it('says in the start\'s line what each breaks and what to set', () => {
    expect(missingSettingLine('APP_AUTH_BASE_URL')).toBe('thiếu cấu hình APP_AUTH_BASE_URL: không ai đăng nhập được (500 ở /auth/login), /readyz trả 503. Đặt địa chỉ IAM, hoặc APP_AUTH_MOCK=true.')
    expect(missingSettingLine('APP_API_PROXY_TARGET')).toBe('thiếu cấu hình APP_API_PROXY_TARGET: /api/** trả 500, /readyz trả 503. Đặt địa chỉ backend, hoặc APP_API_PROXY=false cho gateway không có backend (chỉ forward auth).')
  })

  it('refuses APP_API_PROXY=false beside a target, and a value that is no boolean', () => {
    expect(() => parse({ apiProxy: 'false', apiProxyTarget: 'http://api' })).toThrow('APP_API_PROXY=false không dùng được cùng APP_API_PROXY_TARGET: bỏ một trong hai.')
    expect(() => parse({ apiProxy: 'maybe' })).toThrow(/^APP_API_PROXY phải là true hoặc false/)
    expect(() => parse({ apiProxy: 'false', apiRoutesFile: '/etc/gateway/routes.yaml' })).toThrow('APP_API_PROXY=false không dùng được cùng APP_API_ROUTES_FILE: bỏ một trong hai.')
  })
})

describe('settings that likely do not work as meant', () => {
  const warning = 'APP_AUTH_KIND=oidc mà không có APP_OIDC_REDIRECT_URI và APP_TRUST_PROXY tắt: sau một proxy TLS (nginx, '
    + 'load balancer), redirect_uri gửi OpenID Provider sẽ là http://…/auth/callback. Đặt APP_TRUST_PROXY (số proxy '
    + 'đứng trước, hoặc địa chỉ của chúng) hoặc APP_OIDC_REDIRECT_URI=https://<gateway>/auth/callback.'

  it.each<[string, RawGatewayConfig, boolean, string[]]>([
    ['OpenID Connect, no redirect URI, no proxy believed', { auth: OIDC, oidc: OIDC_SETTINGS }, false, [warning]],
    ['with APP_TRUST_PROXY', { auth: OIDC, oidc: OIDC_SETTINGS, trustProxy: 'true' }, false, []],
    ['with APP_TRUST_PROXY as addresses', { auth: OIDC, oidc: OIDC_SETTINGS, trustProxy: '10.0.0.0/8' }, false, []],
    ['with APP_OIDC_REDIRECT_URI', { auth: OIDC, oidc: { ...OIDC_SETTINGS, redirectUri: 'https://orders.example/auth/callback' } }, false, []],
    ['serving TLS itself', { auth: OIDC, oidc: OIDC_SETTINGS }, true, []],
    ['the contract\'s IAM', { auth: { baseURL: 'http://iam' } }, false, []],
    ['mock mode', { auth: { mock: 'true' } }, false, ['APP_AUTH_MOCK=true: gateway không hỏi IAM, ai cũng đăng nhập được với mật khẩu bất kỳ thành người dùng giả lập '
      + '(APP_AUTH_MOCK_USER). Chỉ dùng cho demo và kiểm thử, không bao giờ trước người dùng thật.']],
  ])('%s', (_case, raw, servesTls, warnings) => {
    expect(settingWarnings(parse(raw), servesTls)).toEqual(warnings)
  })
})
