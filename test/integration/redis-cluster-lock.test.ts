import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { printWarningsOnFailure } from '../support/gateway'
import { useOidcStack } from '../support/oidc'
import { apiGet, signedInOnBoth } from '../support/oidc-failover'
import { redisCli, startRedisCluster, until, type RedisCluster } from '../support/redis-ha'
import { proxyCluster, type ClusterProxies } from '../support/redis-proxy'
import { openSessionCookie } from '../support/sealed'

/**
 * An OpenID session's refresh lock taken on a Redis Cluster whose answer is lost: the node carried out the SET NX, the
 * connection closed before the gateway read the answer, and ioredis sent the command again, which finds the lock the
 * first one took. That lock is the gateway's own: it renews under it, rather than waiting for a holder that does not
 * exist until its deadline (15 s) and answering 502 (seen once in CI, in a failover, redis-cluster-oidc.test.ts).
 * Real processes: a six-node cluster announcing loopback proxies (test/support/redis-proxy.ts), the development
 * provider with 4-second access tokens and rotating refresh tokens, two gateway instances.
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

describe('Redis Cluster: a refresh lock whose answer was lost', () => {
  it('is the renewing instance\'s own lock when ioredis sends the SET NX again: one renewal, 200, the lock released, the other instance served the new token', async () => {
    printWarningsOnFailure(() => stack.gateways)
    const [a, b] = stack.gateways.map(gateway => gateway.url) as [string, string]
    const { agents: [agent], tokens: [seen] } = await signedInOnBoth(stack, ['sale'])
    const sid = openSessionCookie(agent!.jar.get('svc_session')!, 'session-oidc').sid
    const before = { ...stack.provider.counters }

    // SET <lock> <holder> PX <ms> NX, and EXISTS <lock> (a wait for the lock's holder), as RESP.
    const lockKey = `\\$\\d+\r\nsvc:oidc:lock:${sid}\r\n`
    const lockTaken = proxies.watch(new RegExp(`\\*6\r\n\\$3\r\nset\r\n${lockKey}\\$\\d+\r\n[^\r]+\r\n\\$2\r\npx\r\n\\$\\d+\r\n\\d+\r\n\\$2\r\nnx\r\n`, 'i'), { loseFirstAnswer: true })
    const waits = proxies.watch(new RegExp(`\\*2\r\n\\$6\r\nexists\r\n${lockKey}`, 'i'))
    // The 4-s token is due (its last second); the renewal's lock is taken, its answer lost, the command sent again.
    await new Promise(resolve => setTimeout(resolve, 3_300))
    const renewed = await apiGet(agent!, a)
    // The lost SET NX was sent again (the same holder value; through a random node first, which answers MOVED).
    const lost = await lockTaken.lost
    expect(lockTaken.seen.filter(command => command === lost).length).toBeGreaterThanOrEqual(2)
    expect(renewed).toMatchObject({ status: 200, bearer: expect.stringMatching(/^Bearer /) })
    expect(seen!.has(renewed.bearer!)).toBe(false)
    expect(stack.provider.counters.refresh_token - before.refresh_token).toBe(1)
    expect(stack.provider.counters.refresh_token_reuse - before.refresh_token_reuse).toBe(0)
    // Asked of each node directly (the proxies live in this process, which redis-cli blocks): its primary says 0, the
    // others send it there (MOVED).
    const answers = cluster.nodes.map(node => redisCli(node.port, 'EXISTS', `svc:oidc:lock:${sid}`))
    expect(answers.filter(answer => !answer.startsWith('MOVED'))).toEqual(['0'])
    // Released: the other instance takes the new token from the store, with no renewal of its own and no wait.
    await until(async () => (await apiGet(agent!, b)).bearer === renewed.bearer, 'the new token on the other instance', 5_000)
    expect(stack.provider.counters.refresh_token - before.refresh_token).toBe(1)
    // It renewed under that lock at once: no instance waited for a holder (which polls the lock), nor past a deadline.
    expect(waits.seen).toEqual([])
    expect(stack.gateways.map(gateway => gateway.stdout()).join('\n')).not.toMatch(/chờ instance khác làm mới token OIDC quá hạn/)
  })
})
