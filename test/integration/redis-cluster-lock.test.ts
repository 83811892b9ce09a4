import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { printWarningsOnFailure } from '../support/gateway'
import { untilTokenAge, useOidcStack } from '../support/oidc'
import { apiGet, signedInOnBoth, STORE_DOWN } from '../support/oidc-failover'
import { redisCli, startRedisCluster, until, type RedisCluster } from '../support/redis-ha'
import { proxyCluster, type ClusterProxies } from '../support/redis-proxy'
import { openSessionCookie } from '../support/sealed'

/**
 * An OpenID session's refresh lock request (SET NX) on a Redis Cluster, disturbed on its way by proxies the nodes
 * announce (test/support/redis-proxy.ts). Its answer lost: the node carried it out, the connection closed before the
 * gateway read the answer, and ioredis sent it again, which finds the lock the first one took; that lock is the
 * gateway's own, and it renews under it rather than waiting for a holder that does not exist until its deadline (15 s,
 * then 502: what stop 48's CI run logged in redis-cluster-oidc.test.ts). Carried out after the gateway gave up on it:
 * the instance that sent it releases it, rather than every instance waiting it out. Real processes: a six-node cluster,
 * the development provider with 4-second access tokens and rotating refresh tokens, two gateway instances.
 */
let cluster: RedisCluster
let proxies: ClusterProxies
beforeAll(async () => {
  cluster = await startRedisCluster()
  proxies = await proxyCluster(cluster)
}, 60_000)
afterAll(async () => {
  await proxies?.close()
  await cluster?.stop()
})
const stack = useOidcStack({ instances: 2, provider: { accessTokenTtl: 4 }, redisEnv: () => proxies.env })

// A session's refresh lock (server/oidc/redis-token-store.ts KEY.lock) as RESP: SET <lock> <holder> PX <ms> NX, and
// EXISTS <lock>, which an instance waiting for another's renewal polls every 50 ms.
const lockKey = (sid: string) => `\\$\\d+\r\nsvc:oidc:lock:${sid}\r\n`
const lockRequest = (sid: string) => new RegExp(`\\*6\r\n\\$3\r\nset\r\n${lockKey(sid)}\\$\\d+\r\n[^\r]+\r\n\\$2\r\npx\r\n\\$\\d+\r\n\\d+\r\n\\$2\r\nnx\r\n`, 'i')
const lockPoll = (sid: string) => new RegExp(`\\*2\r\n\\$6\r\nexists\r\n${lockKey(sid)}`, 'i')

/** A user signed in on both instances: the session's agent, tokens seen, id, and the provider's counters then. */
async function signedIn(user: string) {
  printWarningsOnFailure(() => stack.gateways)
  const [a, b] = stack.gateways.map(gateway => gateway.url) as [string, string]
  const { agents: [agent], tokens: [seen] } = await signedInOnBoth(stack, [user])
  const sid = openSessionCookie(agent!.jar.get('svc_session')!, 'session-oidc').sid
  return { a, b, agent: agent!, seen: seen!, sid, before: { ...stack.provider.counters } }
}

describe('Redis Cluster: a refresh lock request disturbed on its way', () => {
  it('whose answer was lost is the renewing instance\'s own lock when ioredis sends it again: one renewal, 200, the lock released, the other instance served the new token', async () => {
    const { a, b, agent, seen, sid, before } = await signedIn('sale')

    const lockTaken = proxies.watch(lockRequest(sid), { loseFirstAnswer: true })
    const waits = proxies.watch(lockPoll(sid))
    // The 4-s token is due (its last second); the renewal's lock is taken, its answer lost, the command sent again.
    await untilTokenAge(agent, 3_400)
    const renewed = await apiGet(agent, a)
    // The lost SET NX was sent again (the same holder value; through a random node first, which answers MOVED).
    const lost = await lockTaken.lost
    expect(lockTaken.seen.filter(command => command === lost).length).toBeGreaterThanOrEqual(2)
    expect(renewed).toMatchObject({ status: 200, bearer: expect.stringMatching(/^Bearer /) })
    expect(seen.has(renewed.bearer!)).toBe(false)
    expect(stack.provider.counters.refresh_token - before.refresh_token).toBe(1)
    expect(stack.provider.counters.refresh_token_reuse - before.refresh_token_reuse).toBe(0)
    // Asked of each node directly (the proxies live in this process, which redis-cli blocks): its primary says 0, the
    // others send it there (MOVED).
    const answers = cluster.nodes.map(node => redisCli(node.port, 'EXISTS', `svc:oidc:lock:${sid}`))
    expect(answers.filter(answer => !answer.startsWith('MOVED'))).toEqual(['0'])
    // Released: the other instance takes the new token from the store, with no renewal of its own and no wait.
    await until(async () => (await apiGet(agent, b)).bearer === renewed.bearer, 'the new token on the other instance', 5_000)
    expect(stack.provider.counters.refresh_token - before.refresh_token).toBe(1)
    // It renewed under that lock at once: no instance waited for a holder (which polls the lock), nor past a deadline.
    expect(waits.seen).toEqual([])
    expect(stack.gateways.map(gateway => gateway.stdout()).join('\n')).not.toMatch(/chờ instance khác làm mới token OIDC quá hạn/)
  })

  it('carried out after its sender gave up is released by that instance: the other waits about a second for it, not 15 s, and renews once', async () => {
    const { a, b, agent, seen, sid, before } = await signedIn('viewer')
    // A's lock requests are cut off for 5 s (ioredis sends each again on a new connection, 16 times at most, well
    // within that), then reach Redis all the same: A gave up at 500 ms (its budget) and serves the current token while
    // it lives, else 503 token-store-down.
    const lockTaken = proxies.watch(lockRequest(sid), { cutForMs: 5_000 })
    const waits = proxies.watch(lockPoll(sid))
    await untilTokenAge(agent, 3_400)
    const first = await apiGet(agent, a)
    expect(first.status === 200 ? first.bearer : first.message).toBe(first.status === 200 ? [...seen][0] : STORE_DOWN)
    // Then Redis takes the first: a lock of A's that no renewal holds. B, its token expired, finds it taken and waits.
    await lockTaken.sentOn
    expect(lockTaken.seen.length).toBeGreaterThanOrEqual(2)
    const renewed = await apiGet(agent, b)
    expect(renewed).toMatchObject({ status: 200, bearer: expect.stringMatching(/^Bearer /) })
    expect(seen.has(renewed.bearer!)).toBe(false)
    expect(stack.provider.counters.refresh_token - before.refresh_token).toBe(1)
    expect(stack.provider.counters.refresh_token_reuse - before.refresh_token_reuse).toBe(0)
    // A released it within about a second of its landing (B polls every 50 ms while it finds the lock; 1 or 2 polls
    // here). Without that release the lock lives its 15 s: B polled 96, 288 and 287 times in three red runs.
    expect(waits.seen.length).toBeLessThan(40)
    expect(stack.gateways.map(gateway => gateway.stdout()).join('\n')).not.toMatch(/chờ instance khác làm mới token OIDC quá hạn/)
    await until(async () => (await apiGet(agent, a)).bearer === renewed.bearer, 'the new token on A', 5_000)
  })
})
