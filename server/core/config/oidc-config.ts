/**
 * The OpenID Connect settings (APP_AUTH_KIND=oidc, APP_OIDC_*), parsed and checked once at start; and the claims
 * mapping's defaults for an OpenID Provider (the contract IAM's defaults read its envelope, which a provider has not).
 * Pure.
 */
import { isLoopbackUrl } from '../http/loopback'
import { parseAcrValues, parseMaxAge } from '../session/auth-level'
import { GATEWAY_DEFAULTS as D } from './defaults'
import type { IamMapping, OidcConfig, TokenAuthMethod } from './types'

/** Claims paths when APP_AUTH_MAPPING_* is left at the contract IAM's default: the standard claims. */
const OIDC_MAPPING: Partial<IamMapping> = {
  id: 'sub',
  name: 'name',
  email: 'email',
  roles: 'roles',
  permissions: 'permissions',
  permissionType: '',
}

/** The mapping for ID token and userinfo claims: each path left at the IAM default takes the OIDC one. */
export function oidcMapping(mapping: IamMapping): IamMapping {
  const iamDefaults = D.auth.mapping as Record<string, string>
  const result = { ...mapping } as Record<string, string>
  for (const [key, path] of Object.entries(OIDC_MAPPING)) {
    if (result[key] === iamDefaults[key]) result[key] = path!
  }
  return result as unknown as IamMapping
}

type Fail = (message: string) => Error

/** An absolute http(s) URL without credentials or fragment; http only on a loopback host (development). */
function toUrl(value: string, variable: string, fail: Fail, required: boolean): string {
  if (!value) {
    if (required) throw fail(`${variable} chưa cấu hình (bắt buộc khi APP_AUTH_KIND=oidc).`)
    return ''
  }
  let url: URL
  try {
    url = new URL(value)
  }
  catch {
    throw fail(`${variable} không phải địa chỉ URL hợp lệ.`)
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackUrl(value))) {
    throw fail(`${variable} phải là địa chỉ https:// (http:// chỉ cho máy cục bộ).`)
  }
  if (url.username || url.password || url.hash) throw fail(`${variable} không được chứa thông tin đăng nhập hay fragment.`)
  return value
}

/**
 * Reads the oidc subtree (already coerced to text by the caller's helpers): issuer and client id required, URLs checked,
 * 'openid' required among the scopes.
 */
export function parseOidcConfig(raw: Record<string, string>, flags: Pick<OidcConfig, 'autoRedirect' | 'par'>, fail: Fail): OidcConfig {
  const scopes = (raw.scopes || D.oidc.scopes).split(/\s+/).filter(Boolean)
  if (!scopes.includes('openid')) throw fail(`APP_OIDC_SCOPES phải có 'openid' (nhận được '${raw.scopes}').`)
  const clientId = raw.clientId ?? ''
  if (!clientId) throw fail('APP_OIDC_CLIENT_ID chưa cấu hình (bắt buộc khi APP_AUTH_KIND=oidc).')
  const clientSecret = raw.clientSecret ?? ''
  const clientKeyFile = raw.clientKeyFile ?? ''
  const acrValues = parseAcrValues(raw.acrValues ?? '')
  if (!acrValues) throw fail(`APP_OIDC_ACR_VALUES phải là các giá trị acr cách nhau bởi dấu cách (nhận được '${raw.acrValues}').`)
  const maxAge = raw.maxAge ? parseMaxAge(raw.maxAge) : undefined
  if (raw.maxAge && maxAge === undefined) throw fail(`APP_OIDC_MAX_AGE phải là số giây nguyên từ 0 đến 31536000 (nhận được '${raw.maxAge}').`)
  return {
    issuer: toUrl(raw.issuer ?? '', 'APP_OIDC_ISSUER', fail, true),
    clientId,
    clientSecret,
    tokenAuthMethod: toTokenAuthMethod(raw.tokenAuthMethod ?? '', clientSecret, clientKeyFile, fail),
    clientKeyFile,
    clientKeyId: raw.clientKeyId ?? '',
    acrValues,
    maxAge,
    scopes: scopes.join(' '),
    redirectUri: toUrl(raw.redirectUri ?? '', 'APP_OIDC_REDIRECT_URI', fail, false),
    postLogoutRedirectUri: toUrl(raw.postLogoutRedirectUri ?? '', 'APP_OIDC_POST_LOGOUT_REDIRECT_URI', fail, false),
    ...flags,
  }
}

/** The client authentication methods the gateway speaks, strongest first. */
export const TOKEN_AUTH_METHODS: readonly TokenAuthMethod[] = ['private_key_jwt', 'client_secret_basic', 'client_secret_post', 'none']

/** APP_OIDC_TOKEN_AUTH_METHOD: one of TOKEN_AUTH_METHODS ('' chooses later), with what it needs configured. */
function toTokenAuthMethod(value: string, secret: string, keyFile: string, fail: Fail): TokenAuthMethod | '' {
  if (!value) return ''
  const method = TOKEN_AUTH_METHODS.find(known => known === value)
  if (!method) throw fail(`APP_OIDC_TOKEN_AUTH_METHOD phải là một trong ${TOKEN_AUTH_METHODS.join(', ')} (nhận được '${value}').`)
  if (method === 'private_key_jwt' && !keyFile) throw fail('APP_OIDC_TOKEN_AUTH_METHOD=private_key_jwt cần APP_OIDC_CLIENT_KEY_FILE (khoá riêng PEM hoặc JWK).')
  if (method.startsWith('client_secret_') && !secret) throw fail(`APP_OIDC_TOKEN_AUTH_METHOD=${method} cần APP_OIDC_CLIENT_SECRET.`)
  return method
}

/**
 * The client authentication method to use: the configured one; else the strongest the configuration allows (a client
 * key: private_key_jwt; a secret: client_secret_basic, then client_secret_post; neither: none) among the provider's
 * `token_endpoint_auth_methods_supported` (absent, RFC 8414's default: client_secret_basic alone). `listed` is false
 * when the provider lists none of those the configuration allows: the strongest is tried all the same.
 */
export function chooseTokenAuthMethod(settings: Pick<OidcConfig, 'tokenAuthMethod' | 'clientSecret' | 'clientKeyFile'>, supported: readonly string[] | undefined): { method: TokenAuthMethod, listed: boolean } {
  const offered = supported ?? ['client_secret_basic']
  if (settings.tokenAuthMethod) return { method: settings.tokenAuthMethod, listed: offered.includes(settings.tokenAuthMethod) }
  const allowed = TOKEN_AUTH_METHODS.filter(method => method === 'private_key_jwt'
    ? !!settings.clientKeyFile
    : method === 'none' ? !settings.clientKeyFile && !settings.clientSecret : !!settings.clientSecret)
  const method = allowed.find(candidate => offered.includes(candidate))
  return method ? { method, listed: true } : { method: allowed[0]!, listed: false }
}
