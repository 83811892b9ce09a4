import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { printWarningsOnFailure, type RunningGateway } from '../support/gateway'
import { loginCookie, postLogin } from '../support/login'
import { expectLoggedOutEverywhereWithin2s, sessionUser, startLogoutLoad } from '../support/logout-load'
import { rawRequest } from '../support/raw-http'
import { redisCli, startSentinelTopology, until, type SentinelTopology } from '../support/redis-ha'
import { useStack } from '../support/stack'

/**
 * Redis behind Sentinel (one primary, one replica, three sentinels, real processes): two gateway instances keep
 * logging in, out and refusing passwords while the primary is killed (SIGKILL); every logout made before and during
 * the failover holds on both within 2 s of it, the brute-force limits count across it, and a revocation the old primary
 * acknowledged but never passed to its replica is written again on the new primary.
 */
const stack = useStack()
let topology: SentinelTopology
let gateways: RunningGateway[]

beforeAll(async () => {
  topology = await startSentinelTopology()
  const env = { ...topology.env, APP_RATE_LIMIT_PER_USER: '5' }
  gateways = await Promise.all([stack.gatewayWith(env), stack.gatewayWith(env)])
  for (const gateway of gateways) await until(async () => (await rawRequest(`${gateway.url}/readyz`)).status === 200, `${gateway.url} ready`)
})
afterAll(() => topology?.stop())

const readyz = async (gateway: RunningGateway) => (await rawRequest(`${gateway.url}/readyz`)).status
/** The primary's writes so far are on its replica (the failover test's own precondition, not the gateway's). */
const replicated = () => until(() => redisCli(topology.primaryPort()!, 'WAIT', '1', '1000') === '1', 'the primary\'s writes on its replica', 15_000)

describe('Redis Sentinel: the primary killed under load', () => {
  it('keeps every logout made before and during the failover on both instances, counts limits across it, and says it in /readyz', async () => {
    printWarningsOnFailure(() => gateways)
    const [first, second] = gateways as [RunningGateway, RunningGateway]
    // Before: two sessions logged out, one on each instance; three wrong passwords for 'viewer'.
    const before = [await loginCookie(first, 'sale', 'sale123'), await loginCookie(second, 'admin', 'admin123')]
    await rawRequest(`${first.url}/auth/logout`, { headers: { cookie: before[0]! } })
    await rawRequest(`${second.url}/auth/logout`, { headers: { cookie: before[1]! } })
    for (let i = 0; i < 3; i++) expect((await postLogin(i % 2 ? first : second, { username: 'viewer', password: 'wrong' })).status).toBe(401)
    await replicated()

    // Under load: each instance in turn logs in, reads, logs out, until the failover is over and both are ready again.
    const load = startLogoutLoad(first, second)
    let readyAfterMs: number | undefined
    let to: number | undefined
    try {
      const killedAt = Date.now()
      const failoverDone = topology.failover()
      // Each instance notices at once (its connection closed) and says so: 503 not ready, Redis down.
      await until(async () => (await readyz(first)) === 503 && (await readyz(second)) === 503, 'both instances not ready during the failover', 5_000)
      const during = JSON.parse((await rawRequest(`${first.url}/readyz`)).body) as { status: string, checks: { redis: string } }
      expect(during).toMatchObject({ status: 'not ready', checks: { redis: 'down' } })
      // Two more wrong passwords while Redis is away: counted here, carried to the new primary.
      for (let i = 0; i < 2; i++) expect((await postLogin(i ? first : second, { username: 'viewer', password: 'wrong' })).status).toBe(401)
      const promoted = await failoverDone
      expect(promoted.to).not.toBe(promoted.from)
      to = promoted.to
      await until(async () => (await readyz(first)) === 200 && (await readyz(second)) === 200, 'both instances ready on the new primary', 15_000)
      readyAfterMs = Date.now() - killedAt
      await until(() => load.loggedOut.length >= 3, 'logouts under load across the failover', 20_000)
    }
    finally {
      await load.stop()
    }

    // Every logout, before and during, holds on both instances within 2 s.
    const loggedOut = [...before, ...load.loggedOut]
    await expectLoggedOutEverywhereWithin2s(loggedOut, gateways)
    // The new primary has them all (written or written again), and the five wrong passwords: the sixth attempt is 429.
    expect(Number(redisCli(to!, 'EVAL', 'return #redis.call("keys", "svc:rev:s:*")', '0'))).toBeGreaterThanOrEqual(loggedOut.length)
    await expect.poll(async () => (await postLogin(second, { username: 'viewer', password: 'viewer123' })).status, { timeout: 2_000 }).toBe(429)
    // Nothing failed: Redis is never on a request's path for longer than its budget (logins count locally meanwhile).
    expect({ failures: load.failures, requests: load.requests(), readyAfterMs }).toMatchObject({ failures: [] })
  })

  it('writes again, on the new primary, a revocation the old one acknowledged but never passed to its replica', async () => {
    printWarningsOnFailure(() => gateways)
    const [first, second] = gateways as [RunningGateway, RunningGateway]
    await topology.revive()
    const oldPrimary = topology.primaryPort()!
    const replica = topology.nodes.find(node => node.alive() && node.port !== oldPrimary)!
    await until(() => /master_link_status:up/.test(redisCli(replica.port, 'INFO', 'replication')), 'the replica in sync')
    const cookie = await loginCookie(first, 'sale', 'sale123')
    // Replication cut: the replica cannot authenticate to its primary again once its link is dropped.
    redisCli(replica.port, 'CONFIG', 'SET', 'masterauth', 'not-the-password')
    redisCli(oldPrimary, 'CLIENT', 'KILL', 'TYPE', 'replica')
    await until(() => /master_link_status:down/.test(redisCli(replica.port, 'INFO', 'replication')), 'the replica cut off')
    const revocationKeys = (port: number) => new Set(redisCli(port, 'EVAL', 'return redis.call("keys", "svc:rev:s:*")', '0').split('\n'))
    const before = revocationKeys(oldPrimary)
    // A slow moment, as CI's loaded machine had one here: the primary holds writes for 1.5 s, past the instance's
    // 500-ms Redis budget. The logout answers once the budget is spent (revoked in the instance, the write kept and
    // sent again each second); the revocation is on the old primary once it takes writes again.
    redisCli(oldPrimary, 'CLIENT', 'PAUSE', '1500', 'WRITE')
    expect((await rawRequest(`${first.url}/auth/logout`, { headers: { cookie } })).status).toBe(302)
    let key: string | undefined
    await until(() => {
      key = [...revocationKeys(oldPrimary)].find(k => !before.has(k))
      return key !== undefined
    }, 'the revocation on the old primary', 10_000)
    expect(redisCli(replica.port, 'EXISTS', key!)).toBe('0')

    const { to } = await topology.failover()
    expect(to).toBe(replica.port)
    redisCli(to, 'CONFIG', 'SET', 'masterauth', '')
    await until(async () => (await readyz(first)) === 200 && (await readyz(second)) === 200, 'both instances ready on the new primary', 15_000)
    // The instance that made it writes its recent revocations again once it is back: the new primary has them.
    await expect.poll(() => redisCli(to, 'EXISTS', key!), { timeout: 2_000 }).toBe('1')
    expect(await sessionUser(second, cookie)).toBeNull()
  })
})
