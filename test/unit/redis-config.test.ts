import { describe, expect, it } from 'vitest'
import { readRedisSettings } from '../../server/core/config/config'
import { describeRedis, toRedisNodes } from '../../server/core/config/redis-config'
import { ConfigError } from '../../server/core/config/types'

const PASSWORD = 'Pw-9f3a!secret'
const ENCODED = encodeURIComponent(PASSWORD)

describe('readRedisSettings (APP_REDIS_*)', () => {
  it('is undefined when nothing is set: state per process', () => {
    expect(readRedisSettings({})).toBeUndefined()
    expect(readRedisSettings({ redisUrl: '', redisSentinels: '', redisClusterNodes: '' })).toBeUndefined()
  })

  it('reads one Redis by its address, its ACL user and password from the URL, TLS from rediss://', () => {
    expect(readRedisSettings({ redisUrl: `rediss://gateway:${ENCODED}@cache:6380/2`, redisTlsCa: '/etc/redis/ca.pem' })).toEqual({
      kind: 'standalone', url: `rediss://gateway:${ENCODED}@cache:6380/2`, username: 'gateway', password: PASSWORD, tls: true, tlsCa: '/etc/redis/ca.pem',
    })
    expect(readRedisSettings({ redisUrl: 'redis://cache' })).toEqual({ kind: 'standalone', url: 'redis://cache', tls: false, tlsCa: '' })
  })

  it('reads a Sentinel topology: the sentinels, the primary\'s name, the sentinels\' password; the URL gives user, password, database and TLS', () => {
    expect(readRedisSettings({
      redisSentinels: 'sentinel-0:26379, sentinel-1, [::1]:26380',
      redisSentinelName: 'mymaster',
      redisSentinelPassword: 'sentinel-pw',
      redisUrl: `rediss://gateway:${ENCODED}@redis/3`,
    })).toEqual({
      kind: 'sentinel',
      sentinels: [{ host: 'sentinel-0', port: 26379 }, { host: 'sentinel-1', port: 26379 }, { host: '::1', port: 26380 }],
      name: 'mymaster', sentinelPassword: 'sentinel-pw', db: 3, username: 'gateway', password: PASSWORD, tls: true, tlsCa: '',
    })
    expect(readRedisSettings({ redisSentinels: '10.0.0.5:26379', redisSentinelName: 'mymaster' })).toEqual({
      kind: 'sentinel', sentinels: [{ host: '10.0.0.5', port: 26379 }], name: 'mymaster', db: 0, tls: false, tlsCa: '',
    })
  })

  it('reads a Cluster topology: the nodes to start from', () => {
    expect(readRedisSettings({ redisClusterNodes: 'redis-0:7000,redis-1:7001,redis-2', redisUrl: `redis://:${ENCODED}@cluster` })).toEqual({
      kind: 'cluster', nodes: [{ host: 'redis-0', port: 7000 }, { host: 'redis-1', port: 7001 }, { host: 'redis-2', port: 6379 }], password: PASSWORD, tls: false, tlsCa: '',
    })
  })

  it.each([
    [{ redisSentinels: 's:26379', redisSentinelName: 'm', redisClusterNodes: 'n:6379' }, 'APP_REDIS_SENTINELS và APP_REDIS_CLUSTER_NODES không dùng cùng nhau: Redis là Sentinel hoặc Cluster, chọn một.'],
    [{ redisSentinels: 's:26379' }, 'APP_REDIS_SENTINELS cần APP_REDIS_SENTINEL_NAME (tên primary mà các sentinel theo dõi, vd. mymaster).'],
    [{ redisUrl: 'redis://cache', redisSentinelName: 'mymaster' }, 'APP_REDIS_SENTINEL_NAME chỉ dùng với APP_REDIS_SENTINELS.'],
    [{ redisClusterNodes: 'n:6379', redisSentinelPassword: PASSWORD }, 'APP_REDIS_SENTINEL_PASSWORD chỉ dùng với APP_REDIS_SENTINELS.'],
    [{ redisUrl: `redis://:${ENCODED}@cache`, redisTlsCa: '/ca.pem' }, 'APP_REDIS_TLS_CA cần TLS: APP_REDIS_URL phải bắt đầu bằng rediss://.'],
    [{ redisTlsCa: '/ca.pem' }, 'APP_REDIS_TLS_CA chỉ dùng khi có Redis (APP_REDIS_URL rediss://…).'],
    [{ redisClusterNodes: 'n:6379', redisUrl: `redis://:${ENCODED}@cluster/1` }, 'APP_REDIS_URL: Redis Cluster chỉ có cơ sở dữ liệu 0, bỏ phần /số sau máy.'],
    [{ redisUrl: `redis://:${ENCODED}@cache/x` }, 'APP_REDIS_URL: số cơ sở dữ liệu (phần /số sau máy) phải là số nguyên >= 0.'],
    [{ redisSentinels: 's:99999', redisSentinelName: 'm' }, 'APP_REDIS_SENTINELS phải là danh sách máy:cổng cách nhau bởi dấu phẩy, vd. redis-0:26379,redis-1:26379 (mục thứ 1 không hợp lệ).'],
    [{ redisClusterNodes: 'redis://n:6379' }, 'APP_REDIS_CLUSTER_NODES phải là danh sách máy:cổng cách nhau bởi dấu phẩy, vd. redis-0:6379,redis-1:6379 (mục thứ 1 không hợp lệ).'],
  ])('refuses conflicting or broken settings %j, naming the variables', (raw, message) => {
    expect(() => readRedisSettings(raw)).toThrow(new ConfigError(message))
  })

  it('never repeats a password in a refusal, whichever setting is wrong', () => {
    const cases = [
      { redisUrl: `redis://:${ENCODED}@cache:63x9` },
      { redisUrl: `http://:${ENCODED}@cache` },
      { redisUrl: `redis://:${ENCODED}%zz@cache` },
      { redisUrl: `redis://:${ENCODED}@cache/x` },
      { redisUrl: `rediss://:${ENCODED}@cache`, redisSentinelPassword: PASSWORD },
      { redisSentinels: 's', redisSentinelName: 'm', redisSentinelPassword: PASSWORD, redisClusterNodes: 'n' },
      { redisSentinels: `:${PASSWORD}@s:1`, redisSentinelName: 'm' },
      { redisClusterNodes: `n:1`, redisUrl: `redis://gateway:${ENCODED}@c/4` },
    ]
    for (const raw of cases) {
      let message = ''
      try {
        readRedisSettings(raw)
      }
      catch (error) {
        message = (error as Error).message
      }
      expect(message, JSON.stringify(raw)).not.toBe('')
      expect(message).not.toContain(PASSWORD)
      expect(message).not.toContain(ENCODED)
      expect(message).not.toContain('secret')
    }
  })

  it('describes the connection for the start\'s log line without its password', () => {
    const settings = [
      readRedisSettings({ redisUrl: `rediss://gateway:${ENCODED}@cache:6380` })!,
      readRedisSettings({ redisSentinels: 's0:26379,s1:26379', redisSentinelName: 'mymaster', redisSentinelPassword: PASSWORD, redisUrl: `redis://:${ENCODED}@x` })!,
      readRedisSettings({ redisClusterNodes: 'n0:7000', redisUrl: `rediss://gateway:${ENCODED}@x` })!,
    ]
    expect(settings.map(describeRedis)).toEqual([
      'cache:6380 (TLS, người dùng gateway)',
      'Sentinel mymaster qua s0:26379,s1:26379 (không TLS)',
      'Cluster qua n0:7000 (TLS, người dùng gateway)',
    ])
  })
})

describe('toRedisNodes', () => {
  it('reads host:port lists, IPv6 in brackets, the role\'s port by default', () => {
    expect(toRedisNodes(['a:1', 'b', '[fe80::1]:7000'], 'APP_REDIS_CLUSTER_NODES')).toEqual([{ host: 'a', port: 1 }, { host: 'b', port: 6379 }, { host: 'fe80::1', port: 7000 }])
    expect(toRedisNodes([], 'APP_REDIS_SENTINELS')).toEqual([])
  })
})
