/**
 * oidc/: OpenID Connect as a kind of IAM (APP_AUTH_KIND=oidc). The provider's discovery and keys (this file), the
 * login trip (login.ts, with the gateway's own addresses in origin.ts), the tokens kept beside the session and their
 * renewal, a route audience's too (token-cache.ts, token-store.ts, redis-token-store.ts, renewal.ts, tokens.ts), logout at the provider
 * (logout.ts), back-channel logout (backchannel.ts) and the client's authentication at the provider (client-auth.ts).
 * May import: core, ops, http, stores, session. Never iam/.
 */
import * as client from 'openid-client'
import type { OidcConfig, TokenAuthMethod } from '../core/config/types'
import { GatewayError, MESSAGES } from '../http/errors'
import { useGatewayConfig } from '../ops/config'
import { useLogger } from '../ops/logger'
import { tracingStarted } from '../ops/tracing/tracing'
import { clientAuthFor } from './client-auth'
import { providerFetch } from '../ops/tracing/provider-fetch'

/**
 * The OpenID Provider as the gateway knows it: its discovery document and signing keys, read at start with retries
 * (1 s, doubling, at most 30 s apart) until they come. Until then /readyz answers 503 and the OIDC routes 503.
 */

let configuration: client.Configuration | undefined
/** The same provider for refreshes: without the ID token signature check (see refreshingClient). */
let refreshing: client.Configuration | undefined
let method: TokenAuthMethod | undefined
let discovering: Promise<void> | undefined
let stopped = false
/** With tracing on, every call to the provider is a span (ops/tracing/provider-fetch.ts); undefined: openid-client's own fetch. */
let tracedFetch: client.CustomFetch | undefined
/** The endpoints of the latest discovery document (the spans' names). */
let knownEndpoints: client.ServerMetadata | undefined

/** Whether this gateway logs in through an OpenID Provider (APP_AUTH_KIND=oidc). */
export function isOidc(): boolean {
  return useGatewayConfig().config.kind === 'oidc'
}

/** The OIDC settings (only with APP_AUTH_KIND=oidc). */
export function oidcSettings(): OidcConfig {
  return useGatewayConfig().config.oidc!
}

/** Whether discovery has succeeded (for /readyz). */
export function oidcReady(): boolean {
  return configuration !== undefined
}

/** The provider's configuration for openid-client; 503 while discovery has not succeeded yet. */
export function useOidcClient(): client.Configuration {
  if (!configuration) throw new GatewayError(503, MESSAGES.ssoUnavailable)
  return configuration
}

/**
 * The configuration refreshes use: the same provider and client, without the ID token signature check. A refresh's
 * ID token comes straight from the token endpoint (OIDC Core 3.1.3.7 lets TLS stand for the signature there), and by
 * the time a check of it could fail the provider has already rotated the refresh token: throwing then would lose the
 * new one, and the next refresh, with the spent one, would make a rotating provider revoke the whole grant.
 */
export function refreshingClient(): client.Configuration {
  if (!refreshing) throw new GatewayError(503, MESSAGES.ssoUnavailable)
  return refreshing
}

/** The client authentication method in use (for the log's hint when the provider refuses the client). */
export function tokenAuthMethod(): TokenAuthMethod | undefined {
  return method
}

/** Both configurations from one discovery, with the same client authentication. */
function adopt({ config: discovered, auth, method: chosen }: Discovered, settings: OidcConfig): void {
  configuration = discovered
  method = chosen
  refreshing = new client.Configuration(discovered.serverMetadata(), settings.clientId, undefined, auth)
  refreshing.timeout = discovered.timeout
  if (tracedFetch) {
    configuration[client.customFetch] = tracedFetch
    refreshing[client.customFetch] = tracedFetch
  }
  if (new URL(settings.issuer).protocol === 'http:') client.allowInsecureRequests(refreshing)
}

interface Discovered {
  config: client.Configuration
  auth: client.ClientAuth
  method: TokenAuthMethod
}

/**
 * One discovery: the document at `<issuer>/.well-known/openid-configuration` (openid-client checks that its `issuer`
 * is ours exactly) and the keys at its `jwks_uri`. ID token signatures are checked against the provider's JWKS (`enableNonRepudiationChecks`: the
 * keys are fetched again for a key id they do not hold, so a rotation at the provider is followed); plain http only
 * for a loopback issuer (development and tests, as the configuration allows).
 */
async function discover(settings: OidcConfig, timeoutSeconds: number): Promise<Discovered> {
  const issuer = new URL(settings.issuer)
  // The method is chosen from the metadata discovery reads (APP_OIDC_TOKEN_AUTH_METHOD unset): decided right after it.
  const chosen: { auth?: client.ClientAuth, method?: TokenAuthMethod } = {}
  const deferred: client.ClientAuth = (...args) => chosen.auth!(...args)
  const execute = [client.enableNonRepudiationChecks, ...(issuer.protocol === 'http:' ? [client.allowInsecureRequests] : [])]
  tracedFetch ??= providerFetch(() => knownEndpoints)
  const config = await client.discovery(issuer, settings.clientId, undefined, deferred, { execute, timeout: timeoutSeconds, [client.customFetch]: tracedFetch })
  knownEndpoints = config.serverMetadata()
  Object.assign(chosen, await clientAuthFor(settings, knownEndpoints))
  // The signing keys too, before the gateway says it is ready: handed to openid-client as its first copy.
  const jwksUri = knownEndpoints.jwks_uri
  if (!jwksUri) throw new Error('the provider publishes no jwks_uri')
  const init = { signal: AbortSignal.timeout(timeoutSeconds * 1000), headers: { accept: 'application/json' } }
  const answer = tracedFetch ? await tracedFetch(jwksUri, { ...init, method: 'GET', body: undefined, redirect: 'follow' } as unknown as client.CustomFetchOptions) : await fetch(jwksUri, init)
  const jwks = answer.ok ? await answer.json() as { keys?: unknown } : undefined
  if (!jwks || !Array.isArray(jwks.keys)) throw new Error(`the provider's JWKS (${jwksUri}) answered ${answer.status} without keys`)
  client.setJwksCache(config, { jwks: jwks as client.JWKS, uat: Math.floor(Date.now() / 1000) })
  return { config, auth: chosen.auth!, method: chosen.method! }
}

/** Starts discovery once (APP_AUTH_KIND=oidc); resolves when it has succeeded. */
export function startOidc(): Promise<void> {
  if (!isOidc()) return Promise.resolve()
  discovering ??= (async () => {
    const settings = oidcSettings()
    const { iamTimeoutSeconds } = useGatewayConfig().config
    // With tracing on, discovery is a traced call: it waits the few ms the SDK takes to load.
    await tracingStarted()
    for (let attempt = 0, delay = 1_000; !stopped; attempt++, delay = Math.min(delay * 2, 30_000)) {
      try {
        adopt(await discover(settings, iamTimeoutSeconds), settings)
        useLogger().info({ issuer: settings.issuer, attempt, tokenAuthMethod: method }, 'đã đọc cấu hình nhà cung cấp định danh (OpenID Provider).')
        return
      }
      catch (error) {
        useLogger().warn({ issuer: settings.issuer, attempt, error: (error as Error).message, retryInMs: delay }, 'chưa đọc được cấu hình OpenID Provider: thử lại.')
        await new Promise(resolve => setTimeout(resolve, delay).unref())
      }
    }
  })()
  return discovering
}

/**
 * Reads the provider's configuration again, keys included (an ID token signed by a key our copy of the JWKS does not
 * hold: the provider rotated its keys, and openid-client fetches them again only when its copy is a minute old).
 * The current configuration stays when the provider does not answer.
 */
export async function rediscoverOidc(): Promise<void> {
  try {
    adopt(await discover(oidcSettings(), useGatewayConfig().config.iamTimeoutSeconds), oidcSettings())
  }
  catch (error) {
    useLogger().warn({ error: (error as Error).message }, 'không đọc lại được cấu hình OpenID Provider.')
  }
}

/** Stops the retries (shutdown). */
export function stopOidc(): void {
  stopped = true
}
