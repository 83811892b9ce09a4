/**
 * The Redis settings (APP_REDIS_*): one Redis by its address, a Sentinel-watched primary, or a Redis Cluster, with TLS
 * and an ACL user. Checked whole here, at start; no message ever repeats a value that may hold a password. Pure.
 */
import { ConfigError, type RedisAuth, type RedisNode, type RedisSettings } from './types'

/** The APP_REDIS_* values as coerce.ts read them (config.ts's readRedisSettings): texts, lists, a checked URL. */
export interface RedisValues {
  url: string
  sentinels: string[]
  sentinelName: string
  sentinelPassword: string
  clusterNodes: string[]
  tlsCa: string
}

const DEFAULT_PORTS = { APP_REDIS_SENTINELS: 26379, APP_REDIS_CLUSTER_NODES: 6379 } as const

/**
 * A `host:port` list ([v6]:port for IPv6); the port defaults to the role's usual one. A refusal names the entry by its
 * place, never by its text (one written as a URL may carry a password).
 */
export function toRedisNodes(list: readonly string[], variable: keyof typeof DEFAULT_PORTS): RedisNode[] {
  return list.map((item, index) => {
    const match = /^(?:\[([0-9a-f:.]+)\]|([^:[\]\s/@]+))(?::(\d{1,5}))?$/i.exec(item)
    const port = match?.[3] === undefined ? DEFAULT_PORTS[variable] : Number(match[3])
    if (!match || port < 1 || port > 65_535) {
      throw new ConfigError(`${variable} phải là danh sách máy:cổng cách nhau bởi dấu phẩy, vd. redis-0:${DEFAULT_PORTS[variable]},redis-1:${DEFAULT_PORTS[variable]} (mục thứ ${index + 1} không hợp lệ).`)
    }
    return { host: match[1] ?? match[2]!, port }
  })
}

/**
 * Reads the APP_REDIS_* variables. APP_REDIS_URL alone: that Redis. With APP_REDIS_SENTINELS (and
 * APP_REDIS_SENTINEL_NAME) or APP_REDIS_CLUSTER_NODES, APP_REDIS_URL is optional and gives only the scheme (rediss://:
 * TLS), the ACL user and password, and (Sentinel) the database, as `rediss://gateway:<password>@redis/0`: its host is
 * not used, the nodes come from the list. Settings that cannot be meant together are refused.
 */
export function parseRedisConfig(values: RedisValues): RedisSettings | undefined {
  const { url, sentinelName: name, sentinelPassword, tlsCa } = values
  const sentinels = toRedisNodes(values.sentinels, 'APP_REDIS_SENTINELS')
  const nodes = toRedisNodes(values.clusterNodes, 'APP_REDIS_CLUSTER_NODES')
  if (sentinels.length && nodes.length) throw new ConfigError('APP_REDIS_SENTINELS và APP_REDIS_CLUSTER_NODES không dùng cùng nhau: Redis là Sentinel hoặc Cluster, chọn một.')
  if (sentinels.length && !name) throw new ConfigError('APP_REDIS_SENTINELS cần APP_REDIS_SENTINEL_NAME (tên primary mà các sentinel theo dõi, vd. mymaster).')
  if (!sentinels.length && (name || sentinelPassword)) throw new ConfigError(`${name ? 'APP_REDIS_SENTINEL_NAME' : 'APP_REDIS_SENTINEL_PASSWORD'} chỉ dùng với APP_REDIS_SENTINELS.`)
  if (!url && !sentinels.length && !nodes.length) {
    if (tlsCa) throw new ConfigError('APP_REDIS_TLS_CA chỉ dùng khi có Redis (APP_REDIS_URL rediss://…).')
    return undefined
  }
  const parsed = url ? new URL(url) : undefined
  const auth: RedisAuth = {
    ...(parsed?.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed?.password ? { password: decodeURIComponent(parsed.password) } : {}),
    tls: parsed?.protocol === 'rediss:',
    tlsCa,
  }
  if (tlsCa && !auth.tls) throw new ConfigError('APP_REDIS_TLS_CA cần TLS: APP_REDIS_URL phải bắt đầu bằng rediss://.')
  const db = Number(parsed?.pathname.slice(1) || 0)
  if (!Number.isInteger(db) || db < 0) throw new ConfigError('APP_REDIS_URL: số cơ sở dữ liệu (phần /số sau máy) phải là số nguyên >= 0.')
  if (sentinels.length) return { kind: 'sentinel', sentinels, name, ...(sentinelPassword ? { sentinelPassword } : {}), db, ...auth }
  if (nodes.length) {
    if (db !== 0) throw new ConfigError('APP_REDIS_URL: Redis Cluster chỉ có cơ sở dữ liệu 0, bỏ phần /số sau máy.')
    return { kind: 'cluster', nodes, ...auth }
  }
  return { kind: 'standalone', url, ...auth }
}

/** How the gateway's Redis is reached, for a log line: never a password. */
export function describeRedis(settings: RedisSettings): string {
  const list = (nodes: RedisNode[]) => nodes.map(node => `${node.host}:${node.port}`).join(',')
  const who = `${settings.tls ? 'TLS' : 'không TLS'}${settings.username ? `, người dùng ${settings.username}` : ''}`
  if (settings.kind === 'sentinel') return `Sentinel ${settings.name} qua ${list(settings.sentinels)} (${who})`
  if (settings.kind === 'cluster') return `Cluster qua ${list(settings.nodes)} (${who})`
  const url = new URL(settings.url)
  return `${url.host} (${who})`
}
