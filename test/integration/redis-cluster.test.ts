import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { limitKey } from '../../server/core/limits/rate-limit'
import { printWarningsOnFailure, type RunningGateway } from '../support/gateway'
import { loginCookie, postLogin } from '../support/login'
import { expectLoggedOutEverywhereWithin2s, startLogoutLoad } from '../support/logout-load'
import { rawRequest } from '../support/raw-http'
import { keySlot, redisCli, startRedisCluster, until, type RedisCluster } from '../support/redis-ha'
import { useStack } from '../support/stack'

/**
 * A six-node Redis Cluster (three primaries, a replica each, real processes, a node failed after 1 s): two gateway
 * instances keep logging in and out while the primary of the login limits' slot is killed and then that slot is moved
 * to another primary; every logout holds on both within 2 s, the limits count in one slot across both, and no
 * request fails.
 */
const stack = useStack()
let cluster: RedisCluster
let gateways: RunningGateway[]
/** The slot of the limits' keys of 127.0.0.1 (their hash tag is the address's). */
const LIMITS_SLOT = keySlot(limitKey('ip', '127.0.0.1'))

beforeAll(async () => {
  cluster = await startRedisCluster()
  const env = { ...cluster.env, APP_RATE_LIMIT_PER_USER: '5' }
  gateways = await Promise.all([stack.gatewayWith(env), stack.gatewayWith(env)])
  for (const gateway of gateways) await until(async () => (await rawRequest(`${gateway.url}/readyz`)).status === 200, `${gateway.url} ready`, 15_000)
})
afterAll(() => cluster?.stop())

const ready = async (gateway: RunningGateway) => JSON.parse((await rawRequest(`${gateway.url}/readyz`)).body) as { status: string, checks: { redis: string } }

describe('Redis Cluster: a primary killed and a slot moved under load', () => {
  it('keeps every logout on both instances and the limits in one slot, with no request failed', async () => {
    printWarningsOnFailure(() => gateways)
    const [first, second] = gateways as [RunningGateway, RunningGateway]
    expect(keySlot(limitKey('u', '127.0.0.1', 'viewer'))).toBe(LIMITS_SLOT)
    const before = [await loginCookie(first, 'sale', 'sale123'), await loginCookie(second, 'admin', 'admin123')]
    await rawRequest(`${first.url}/auth/logout`, { headers: { cookie: before[0]! } })
    await rawRequest(`${second.url}/auth/logout`, { headers: { cookie: before[1]! } })
    for (let i = 0; i < 3; i++) expect((await postLogin(i % 2 ? first : second, { username: 'viewer', password: 'wrong' })).status).toBe(401)
    const owner = cluster.primaries().find(p => redisCli(p.port, 'CLUSTER', 'COUNTKEYSINSLOT', String(LIMITS_SLOT)) !== '0')!
    // Acknowledged by the slot's replica before its primary is killed (a loaded machine may take longer than one WAIT).
    await until(() => redisCli(owner.port, 'WAIT', '1', '1000') === '1', 'the limits replicated to the slot\'s replica', 15_000)

    const load = startLogoutLoad(first, second)
    try {
      const failed = await cluster.failSlotPrimary(LIMITS_SLOT)
      expect(failed.to).not.toBe(failed.from)
      await until(async () => (await ready(first)).status === 'ready' && (await ready(second)).status === 'ready', 'both ready after the failover', 15_000)
      // Counted in the promoted replica (the address's slot): one more wrong password.
      expect((await postLogin(first, { username: 'viewer', password: 'wrong' })).status).toBe(401)
      const moved = await cluster.moveSlot(LIMITS_SLOT)
      expect(moved.to).not.toBe(moved.from)
      // Followed to its new primary (MOVED), with the four counts so far: the fifth wrong password is counted there.
      expect((await postLogin(second, { username: 'viewer', password: 'wrong' })).status).toBe(401)
      const keys = redisCli(moved.to, 'CLUSTER', 'GETKEYSINSLOT', String(LIMITS_SLOT), '100').split('\n')
      expect(keys).toEqual(expect.arrayContaining([limitKey('ip', '127.0.0.1'), limitKey('u', '127.0.0.1', 'viewer')]))
      expect(redisCli(moved.to, 'GET', limitKey('u', '127.0.0.1', 'viewer'))).toBe('5')
      await until(() => load.loggedOut.length >= 3, 'logouts under load across the failover and the move', 20_000)
    }
    finally {
      await load.stop()
    }
    const loggedOut = [...before, ...load.loggedOut]
    await expectLoggedOutEverywhereWithin2s(loggedOut, gateways)
    expect((await postLogin(first, { username: 'viewer', password: 'viewer123' })).status).toBe(429)
    expect(await ready(second)).toMatchObject({ status: 'ready', checks: { redis: 'up' } })
    expect({ failures: load.failures, requests: load.requests() }).toMatchObject({ failures: [] })
  })
})
