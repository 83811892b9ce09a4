/**
 * ops/: what the process runs on, for every layer above: its configuration (this file: APP_* parsed once, the sealed
 * kinds' keys, the cache of opened session cookies, the routes file), the logger, the metrics and their listener, audit
 * lines, the drain's count of work in flight, throttled warnings, the tick-shape option, and traces (tracing/).
 * May import: core only (and its own files). Reads no request: the request's facts are http/'s.
 */
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { useRuntimeConfig } from 'nitropack/runtime'
import { parse as parseYaml } from 'yaml'
import { overlayEnv } from '../core/config/coerce'
import { parseGatewayConfig, parseLoggingConfig, readSecrets } from '../core/config/config'
import { parseApiRoutes, type RouteDefaults } from '../core/config/routes'
import { ConfigError, type ApiRoute, type GatewayConfig, type LoggingConfig, type RawGatewayConfig } from '../core/config/types'
import { deriveSealKeys, sessionKind, type SealKeys } from '../core/session/seal'
import { SessionCache } from '../core/session/session-cache'
import { useLogger } from './logger'
import { nameRoutes, watchSessionCache } from './metrics'

/** The keys of each kind the gateway seals (core/session/seal.ts): never one kind's key for another's text. */
export interface GatewaySeals {
  /** svc_session, of the gateway's mode. */
  session: SealKeys
  /** The OpenID login's trip cookie. */
  oidcTrip: SealKeys
  /** An OpenID session's tokens, kept in Redis. */
  oidcTokens: SealKeys
  /** The OpenID logout's trip cookie (its state and where to return). */
  oidcLogout: SealKeys
}

interface GatewaySettings {
  config: GatewayConfig
  seals: GatewaySeals
  sessions: SessionCache
  /** The routes of APP_API_ROUTES_FILE, checked ([] without one); replaced whole by reloadRoutes. */
  routes: ApiRoute[]
  /** The PEM text of APP_REDIS_TLS_CA, read at start (undefined without one). */
  redisCa: string | undefined
}

let cached: GatewaySettings | undefined

/**
 * Reads the session secrets; under `nuxt dev` a missing one becomes a random per-process key (with a warning). The
 * prerenderer (pages prerendered at build time, without a session) opens and seals nothing: a random key, always.
 */
function secretsFor(raw: RawGatewayConfig): string[] {
  if (import.meta.prerender) return [randomBytes(32).toString('hex')]
  const current = raw.session?.secret
  const previous = raw.session?.secretPrevious
  if (import.meta.dev && String(current ?? '').length < 32) {
    useLogger().warn('APP_SESSION_SECRET chưa đủ 32 ký tự: dùng khoá ngẫu nhiên cho tiến trình dev này.')
    return [randomBytes(32).toString('hex')]
  }
  return readSecrets(current, previous)
}

/**
 * Reads the routes file (APP_API_ROUTES_FILE): JSON when its name ends in .json, else YAML (which reads JSON too), and
 * checks it whole (core/config/routes.ts). A file that cannot be read or parsed is a ConfigError naming the variable
 * and the file, with the parser's own words on where it stopped. '' reads nothing: no routes.
 */
export function readRoutesFile(file: string, defaults: RouteDefaults): ApiRoute[] {
  if (!file) return []
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  }
  catch (error) {
    throw new ConfigError(`APP_API_ROUTES_FILE: không đọc được tệp ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`)
  }
  const json = /\.json$/i.test(file)
  let document: unknown
  try {
    document = json ? JSON.parse(text) : parseYaml(text, { uniqueKeys: true, maxAliasCount: 100 })
  }
  catch (error) {
    throw new ConfigError(`APP_API_ROUTES_FILE: tệp ${file} không phải ${json ? 'JSON' : 'YAML'} hợp lệ: ${(error as Error).message.split('\n')[0]}`)
  }
  return parseApiRoutes(document, defaults)
}

/** APP_REDIS_TLS_CA's certificates, read at start: a file that cannot be read, or holds no PEM certificate, stops it. */
function readRedisCa(file: string): string | undefined {
  if (!file) return undefined
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  }
  catch (error) {
    throw new ConfigError(`APP_REDIS_TLS_CA: không đọc được tệp ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`)
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) throw new ConfigError(`APP_REDIS_TLS_CA: tệp ${file} không có chứng chỉ PEM (-----BEGIN CERTIFICATE-----).`)
  return text
}

/** runtimeConfig.svcGateway's defaults with the APP_* variables of the start over them, not yet checked. */
function rawConfig(): RawGatewayConfig {
  const defaults = (useRuntimeConfig() as { svcGateway?: Record<string, unknown> }).svcGateway ?? {}
  return overlayEnv(defaults, process.env) as RawGatewayConfig
}

/**
 * The logging settings alone: the logger exists before the whole configuration is checked. Invalid ones give the
 * defaults here (the whole check then names the variable and stops the start). The dev server logs for people.
 */
export function loggingSettings(): LoggingConfig {
  try {
    const settings = parseLoggingConfig(rawConfig())
    if (import.meta.dev && !process.env.APP_LOG_FORMAT) settings.format = 'pretty'
    return settings
  }
  catch {
    return { level: 'info', format: 'json', access: true }
  }
}

/**
 * The gateway's configuration, parsed and validated once per process: runtimeConfig.svcGateway's defaults with the
 * APP_* variables of the start over them, the keys of each sealed kind derived once, and the cache of opened session
 * cookies, the routes file's routes, and the Redis CA file's certificates. Raises a ConfigError naming the variable when something cannot work.
 */
export function useGatewayConfig(): GatewaySettings {
  if (!cached) {
    const raw = rawConfig()
    const config = parseGatewayConfig(raw, secretsFor(raw))
    const seals: GatewaySeals = {
      session: deriveSealKeys(config.secrets, sessionKind(config.mock, config.kind)),
      oidcTrip: deriveSealKeys(config.secrets, 'oidc-trip'),
      oidcTokens: deriveSealKeys(config.secrets, 'oidc-tokens'),
      oidcLogout: deriveSealKeys(config.secrets, 'oidc-logout'),
    }
    const sessions = new SessionCache(seals.session)
    watchSessionCache(() => ({ hits: sessions.hits, misses: sessions.misses }))
    const routes = readRoutesFile(config.apiRoutesFile, { timeoutMs: config.apiProxyTimeout, oidc: config.kind === 'oidc' })
    nameRoutes(config.apiRoutesFile ? routes.map(route => route.name) : undefined)
    cached = { config, seals, sessions, routes, redisCa: readRedisCa(config.redis?.tlsCa ?? '') }
  }
  return cached
}

/**
 * Reads the routes file again (SIGHUP, server/node-server.ts): requests that arrive from now on take the new routes,
 * those in flight finish with theirs. A file that cannot be read or does not check changes nothing: its ConfigError
 * is returned, to be logged, and the old routes stay.
 */
export function reloadRoutes(): ApiRoute[] | ConfigError {
  const settings = useGatewayConfig()
  const { config } = settings
  try {
    const routes = readRoutesFile(config.apiRoutesFile, { timeoutMs: config.apiProxyTimeout, oidc: config.kind === 'oidc' })
    nameRoutes(routes.map(route => route.name))
    settings.routes = routes
    return routes
  }
  catch (error) {
    if (error instanceof ConfigError) return error
    throw error
  }
}
