/**
 * The OpenID Connect settings (APP_AUTH_KIND=oidc, APP_OIDC_*), parsed and checked once at start; and the claims
 * mapping's defaults for an OpenID Provider (the contract IAM's defaults read its envelope, which a provider has not).
 * Pure.
 */
import { GATEWAY_DEFAULTS as D } from './defaults'
import type { IamMapping, OidcConfig } from './types'

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
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw fail(`${variable} phải là địa chỉ https:// (http:// chỉ cho máy cục bộ).`)
  }
  if (url.username || url.password || url.hash) throw fail(`${variable} không được chứa thông tin đăng nhập hay fragment.`)
  return value
}

/**
 * Reads the oidc subtree (already coerced to text by the caller's helpers): issuer and client id required, URLs checked,
 * 'openid' required among the scopes.
 */
export function parseOidcConfig(raw: Record<string, string>, autoRedirect: boolean, fail: Fail): OidcConfig {
  const scopes = (raw.scopes || D.oidc.scopes).split(/\s+/).filter(Boolean)
  if (!scopes.includes('openid')) throw fail(`APP_OIDC_SCOPES phải có 'openid' (nhận được '${raw.scopes}').`)
  const clientId = raw.clientId ?? ''
  if (!clientId) throw fail('APP_OIDC_CLIENT_ID chưa cấu hình (bắt buộc khi APP_AUTH_KIND=oidc).')
  return {
    issuer: toUrl(raw.issuer ?? '', 'APP_OIDC_ISSUER', fail, true),
    clientId,
    clientSecret: raw.clientSecret ?? '',
    scopes: scopes.join(' '),
    redirectUri: toUrl(raw.redirectUri ?? '', 'APP_OIDC_REDIRECT_URI', fail, false),
    postLogoutRedirectUri: toUrl(raw.postLogoutRedirectUri ?? '', 'APP_OIDC_POST_LOGOUT_REDIRECT_URI', fail, false),
    autoRedirect,
  }
}
