import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { calculateJwkThumbprint, importPKCS8, type JWK } from 'jose'
import * as client from 'openid-client'
import { chooseTokenAuthMethod } from '../core/config/oidc-config'
import { ConfigError, type OidcConfig, type TokenAuthMethod } from '../core/config/types'
import { useLogger } from '../ops/logger'

/**
 * How the gateway authenticates as a client at the provider (token, revocation and PAR requests alike):
 * client_secret_basic, client_secret_post, private_key_jwt (RFC 7523: an assertion signed with the key of
 * APP_OIDC_CLIENT_KEY_FILE, RS256 or ES256) or none, as configured or chosen from the provider's list.
 */

/** The private key of private_key_jwt as read at start. */
interface ClientKey {
  key: KeyObject
  alg: 'RS256' | 'ES256'
  /** The JWK's own kid, else APP_OIDC_CLIENT_KEY_ID; undefined: the key's RFC 7638 thumbprint. */
  kid?: string
}

let clientKey: ClientKey | undefined

const keyError = (file: string, why: string) => new ConfigError(`APP_OIDC_CLIENT_KEY_FILE: ${file} ${why}`)

/** A private JWK of the file (one key, or the first private key of a JWK Set). */
function privateJwk(text: string, file: string): JWK {
  let parsed: { keys?: JWK[] } & JWK
  try {
    parsed = JSON.parse(text)
  }
  catch {
    throw keyError(file, 'không phải JSON (JWK) hợp lệ.')
  }
  const jwk = Array.isArray(parsed.keys) ? parsed.keys.find(key => key?.d) : parsed
  if (!jwk?.d) throw keyError(file, 'không có khoá riêng (JWK cần trường d).')
  return jwk
}

/**
 * Reads and checks APP_OIDC_CLIENT_KEY_FILE at start (a PEM private key, PKCS#8, PKCS#1 or SEC1, or a private JWK):
 * RSA of 2048 bits or more (RS256) or EC P-256 (ES256). A ConfigError naming the variable otherwise. No file: nothing.
 */
export function readClientKey(settings: Pick<OidcConfig, 'clientKeyFile' | 'clientKeyId'>): void {
  const file = settings.clientKeyFile
  if (!file) return
  let text: string
  try {
    text = readFileSync(file, 'utf8').trim()
  }
  catch (error) {
    throw keyError(file, `không đọc được (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`)
  }
  const jwk = text.startsWith('{') ? privateJwk(text, file) : undefined
  let key: KeyObject
  try {
    key = jwk ? createPrivateKey({ key: jwk, format: 'jwk' }) : createPrivateKey(text)
  }
  catch (error) {
    throw keyError(file, `không phải khoá riêng PEM hoặc JWK đọc được (${(error as Error).message}).`)
  }
  const details = key.asymmetricKeyDetails ?? {}
  const alg = key.asymmetricKeyType === 'rsa' && (details.modulusLength ?? 0) >= 2048
    ? 'RS256'
    : key.asymmetricKeyType === 'ec' && details.namedCurve === 'prime256v1' ? 'ES256' : undefined
  if (!alg) throw keyError(file, 'phải là khoá RSA từ 2048 bit (RS256) hoặc EC P-256 (ES256).')
  if (jwk?.alg && jwk.alg !== alg) throw keyError(file, `có alg '${jwk.alg}', nhưng khoá này ký ${alg}.`)
  clientKey = { key, alg, kid: jwk?.kid || settings.clientKeyId || undefined }
}

/** The key's kid: its own, else its RFC 7638 thumbprint (what a provider that computes kids from the JWK sees). */
async function keyId(key: ClientKey): Promise<string> {
  return key.kid ?? calculateJwkThumbprint(createPublicKey(key.key).export({ format: 'jwk' }) as JWK)
}

/** The openid-client authentication of one method. */
async function authFor(method: TokenAuthMethod, settings: OidcConfig): Promise<client.ClientAuth> {
  switch (method) {
    case 'client_secret_basic': return client.ClientSecretBasic(settings.clientSecret)
    case 'client_secret_post': return client.ClientSecretPost(settings.clientSecret)
    case 'none': return client.None()
    case 'private_key_jwt': {
      if (!clientKey) throw new Error('private_key_jwt without APP_OIDC_CLIENT_KEY_FILE')
      const pem = clientKey.key.export({ type: 'pkcs8', format: 'pem' }) as string
      return client.PrivateKeyJwt({ key: await importPKCS8(pem, clientKey.alg), kid: await keyId(clientKey) })
    }
  }
}

/**
 * The client authentication for a provider whose metadata has just been read: the configured method, else the
 * strongest the configuration allows among those the provider lists (core/config/oidc-config.ts).
 */
export async function clientAuthFor(settings: OidcConfig, metadata: client.ServerMetadata): Promise<{ auth: client.ClientAuth, method: TokenAuthMethod }> {
  const { method, listed } = chooseTokenAuthMethod(settings, metadata.token_endpoint_auth_methods_supported)
  if (!listed) {
    useLogger().warn({ tokenAuthMethod: method, supported: metadata.token_endpoint_auth_methods_supported ?? null },
      'OpenID Provider không liệt kê phương thức xác thực client này trong token_endpoint_auth_methods_supported: vẫn dùng nó.')
  }
  return { auth: await authFor(method, settings), method }
}

/**
 * When the provider refuses the client itself (`invalid_client`, `unauthorized_client`) at its token, revocation or
 * PAR endpoint, says in the log what to check, without any secret: the usual cause with a client id or secret of
 * characters other than letters and digits is a provider that does not decode client_secret_basic's form-encoding
 * (RFC 6749 §2.3.1).
 */
export function hintOnClientRefusal(error: unknown, method: TokenAuthMethod | undefined, clientId: string): void {
  const code = refusalCode(error)
  if (code !== 'invalid_client' && code !== 'unauthorized_client') return
  const encoded = basicForm(clientId) !== clientId
  useLogger().warn({ error: code, tokenAuthMethod: method ?? null, clientId },
    `OpenID Provider từ chối xác thực client (${code}) với phương thức ${method ?? '?'}. `
    + (method === 'client_secret_basic'
      ? `client_secret_basic mã hoá client id và secret theo RFC 6749 §2.3.1 trước base64${encoded ? ` (client id này thành '${basicForm(clientId)}')` : ''}; `
      + 'nhà cung cấp không giải mã dạng đó sẽ từ chối: đặt APP_OIDC_TOKEN_AUTH_METHOD=client_secret_post. '
      : '')
    + 'Kiểm tra client id, secret hoặc khoá (APP_OIDC_CLIENT_KEY_FILE) và phương thức đã đăng ký tại nhà cung cấp.')
}

/**
 * The OAuth error code of a failed request: the JSON body's `error` (ResponseBodyError), or that of a 401's
 * `WWW-Authenticate` challenge (WWWAuthenticateChallengeError: a client refused in the Basic scheme).
 */
function refusalCode(error: unknown): unknown {
  if (error instanceof client.WWWAuthenticateChallengeError) return error.cause.find(challenge => challenge.parameters.error)?.parameters.error
  return (error as { error?: unknown } | null)?.error
}

/** RFC 6749 §2.3.1's form-encoding of a client id or secret, as openid-client sends it in client_secret_basic. */
function basicForm(value: string): string {
  return encodeURIComponent(value).replace(/[-_.!~*'()]|%20/g, part => part === '%20' ? '+' : `%${part.charCodeAt(0).toString(16).toUpperCase()}`)
}
