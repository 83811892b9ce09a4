import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll } from 'vitest'
import { gatewayClient, startDevOidcProvider } from '../../dev/oidc-provider.mjs'
import { startSampleBackend } from '../../dev/backend.mjs'
import type { CookieAgent } from '../../dev/oidc-browser.mjs'
import { startEchoBackend, type EchoedRequest } from './echo-backend'
import { freePort, SERVER_ENTRY, startGateway, type RunningGateway } from './gateway'
import { startRedis, type RunningRedis } from './redis'
import { openSessionCookie } from './sealed'

export type DevOidcProvider = Awaited<ReturnType<typeof startDevOidcProvider>>

export interface OidcStackOptions {
  /** Gateway instances (they share a Redis when more than one). @default 1 */
  instances?: number
  /** A redis-server for the gateways even with one instance. */
  redis?: boolean
  /** Another Redis's variables for the gateways, read when they start (a Sentinel topology's): no redis-server started. */
  redisEnv?: () => Record<string, string>
  /** Options of the development provider (accessTokenTtl, ...). */
  provider?: Parameters<typeof startDevOidcProvider>[0]
  /** More APP_* variables for every gateway. */
  env?: Record<string, string>
  /** The backend behind /api: the echo backend (default), or the sample backend checking the provider's userinfo. */
  backend?: 'echo' | 'sample'
}

export interface OidcStack {
  provider: DevOidcProvider
  gateways: RunningGateway[]
  /** The backend behind /api (its `url`; `received` for the echo backend). */
  echo: { url: string, close: () => Promise<unknown>, received?: EchoedRequest[] }
  redis?: RunningRedis
}

/**
 * The development OpenID Provider (dev/oidc-provider.mjs: panva's oidc-provider on loopback), an echo backend, and
 * gateway instances with APP_AUTH_KIND=oidc on ports chosen first, so the provider knows their callback, post-logout
 * and back-channel addresses (the client `gateway`, secret `gateway-secret`; back-channel logout goes to the first).
 */
/** Resolves once the gateway's /readyz says its provider's discovery document is read (30 s at most). */
export async function providerKnown(gateway: RunningGateway): Promise<void> {
  const until = Date.now() + 30_000
  for (;;) {
    const checks = await fetch(`${gateway.url}/readyz`).then(answer => answer.json() as Promise<{ checks?: { oidc?: string } }>, () => undefined)
    if (checks?.checks?.oidc === 'up') return
    if (Date.now() > until) throw new Error(`${gateway.url}: the provider's discovery is not read after 30 s (/readyz: ${JSON.stringify(checks)})`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

export function useOidcStack(options: OidcStackOptions = {}): OidcStack {
  const stack = {} as OidcStack
  beforeAll(async () => {
    const count = options.instances ?? 1
    const ports = await Promise.all(Array.from({ length: count }, () => freePort()))
    const origins = ports.map(port => `http://127.0.0.1:${port}`)
    const client = gatewayClient({ origin: origins[0]!, clientSecret: 'gateway-secret' })
    client.redirect_uris = origins.map(origin => `${origin}/auth/callback`)
    client.post_logout_redirect_uris = origins.flatMap(origin => [`${origin}/auth/logged-out`, `${origin}/`, `${origin}/auth/login`])
    ;[stack.provider, stack.redis] = await Promise.all([
      startDevOidcProvider({ ...options.provider, clients: [client] }),
      (count > 1 || options.redis) && !options.redisEnv ? startRedis() : Promise.resolve(undefined),
    ])
    stack.echo = options.backend === 'sample'
      ? await startSampleBackend({ oidcUserInfoUrl: (await (await fetch(`${stack.provider.url}/.well-known/openid-configuration`)).json()).userinfo_endpoint, pushEveryMs: 60_000 })
      : await startEchoBackend()
    stack.gateways = await Promise.all(ports.map(port => startGateway(oidcEnv(stack, { ...options.redisEnv?.(), ...options.env }), SERVER_ENTRY, port)))
    // Each has read the provider's discovery document (/readyz: checks.oidc 'up'), as a load balancer waits for it: a
    // login before that is 'ssoUnavailable', and on a loaded machine the first discovery can take a retry.
    await Promise.all(stack.gateways.map(gateway => providerKnown(gateway)))
  }, 60_000)
  afterAll(async () => {
    await Promise.all((stack.gateways ?? []).map(gateway => gateway.stop()))
    await Promise.all([stack.provider?.close(), stack.echo?.close(), stack.redis?.stop()])
  })
  return stack
}

/** The variables of an OIDC gateway of this stack. */
export function oidcEnv(stack: Pick<OidcStack, 'provider' | 'echo' | 'redis'>, extra: Record<string, string> = {}): Record<string, string> {
  return {
    APP_AUTH_KIND: 'oidc',
    APP_OIDC_ISSUER: stack.provider.url,
    APP_OIDC_CLIENT_ID: 'gateway',
    APP_OIDC_CLIENT_SECRET: 'gateway-secret',
    APP_AUTH_MAPPING_ROLES: 'realm_access.roles',
    APP_API_PROXY_TARGET: stack.echo.url,
    ...(stack.redis ? { APP_REDIS_URL: stack.redis.url } : {}),
    ...extra,
  }
}

// A browser's part by fetch, shared with the bench and dev/oidc-demo-check.mjs.
export { cookieAgent, logInWithProvider, throughProviderForm } from '../../dev/oidc-browser.mjs'
export type { CookieAgent }

/**
 * Waits until the access token the agents' sessions took at login is `age` ms old (the youngest, with several agents),
 * counted from each session's own `iat`, the moment the gateway took the token (server/oidc/login.ts), not from the
 * test's clock: on a loaded machine a login and a first request can take a second, and a 4-s token's last second is
 * the window these tests aim at. `before`: the age the token must not have reached yet (a check that needs it alive);
 * a wait that starts later throws, saying so, rather than let the test fail on a symptom.
 */
export async function untilTokenAge(agents: CookieAgent | CookieAgent[], age: number, { before = Infinity } = {}): Promise<void> {
  const issued = Math.max(...[agents].flat().map(agent => openSessionCookie(agent.jar.get('svc_session')!, 'session-oidc').iat))
  const late = Date.now() - (issued + before)
  if (late >= 0) throw new Error(`the login's token is already ${before + late} ms old, past the ${before} ms this check needs: the machine was too slow for it`)
  await sleep(Math.max(0, issued + age - Date.now()))
}

/** Submits the first form of an HTML answer with its hidden fields (a page that would post itself with a script). */
export async function submitForm(agent: CookieAgent, html: string, base: string, stop?: (at: URL) => boolean) {
  const form = /<form[^>]*>[\s\S]*?<\/form>/i.exec(html)?.[0]
  if (!form) throw new Error(`no form in:\n${html.slice(0, 500)}`)
  const action = /action="([^"]*)"/i.exec(form)?.[1] ?? ''
  const fields = new URLSearchParams()
  for (const input of form.matchAll(/<input[^>]*>/gi)) {
    const name = /name="([^"]*)"/i.exec(input[0])?.[1]
    if (name) fields.set(name, /value="([^"]*)"/i.exec(input[0])?.[1] ?? '')
  }
  return agent.follow(new URL(action.replaceAll('&amp;', '&'), base), { method: 'POST', body: fields }, stop)
}
