import { randomBytes } from 'node:crypto'
import { useRuntimeConfig } from 'nitropack/runtime'
import { overlayEnv, parseGatewayConfig, readSecrets, type GatewayConfig, type RawGatewayConfig } from '../core/config'
import { deriveSealKeys, type SealKeys } from '../core/seal'
import { SessionCache } from '../core/session-cache'

let cached: { config: GatewayConfig, sealKeys: SealKeys, sessions: SessionCache } | undefined

/** Reads the session secrets; under `nuxt dev` a missing one becomes a random per-process key (with a warning). */
function secretsFor(raw: RawGatewayConfig): string[] {
  const current = raw.session?.secret
  const previous = raw.session?.secretPrevious
  if (import.meta.dev && String(current ?? '').length < 32) {
    console.warn('[svc-auth-gateway] APP_SESSION_SECRET chưa đủ 32 ký tự: dùng khoá ngẫu nhiên cho tiến trình dev này.')
    return [randomBytes(32).toString('hex')]
  }
  return readSecrets(current, previous)
}

/**
 * The gateway's configuration, parsed and validated once per process: runtimeConfig.svcGateway's defaults with the
 * APP_* variables of the start over them, the session keys derived once, and the cache of opened session cookies.
 * Raises a ConfigError naming the variable when something cannot work.
 */
export function useGatewayConfig(): { config: GatewayConfig, sealKeys: SealKeys, sessions: SessionCache } {
  if (!cached) {
    const defaults = (useRuntimeConfig() as { svcGateway?: Record<string, unknown> }).svcGateway ?? {}
    const raw = overlayEnv(defaults, process.env) as RawGatewayConfig
    const config = parseGatewayConfig(raw, secretsFor(raw))
    const sealKeys = deriveSealKeys(config.secrets, config.mock)
    cached = { config, sealKeys, sessions: new SessionCache(sealKeys) }
  }
  return cached
}
