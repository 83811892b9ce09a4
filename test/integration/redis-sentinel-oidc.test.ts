import { afterAll, beforeAll, describe, it } from 'vitest'
import { printWarningsOnFailure } from '../support/gateway'
import { useOidcStack } from '../support/oidc'
import { expectRenewedOnce, ready, renewalHeldAcrossKill, signedInOnBoth, startRenewalLoad } from '../support/oidc-failover'
import { redisCli, startSentinelTopology, until, type SentinelTopology } from '../support/redis-ha'

/**
 * OpenID sessions on two gateway instances sharing a Redis behind Sentinel (one primary, one replica, three sentinels,
 * real processes), the development provider with 4-second access tokens and rotating refresh tokens (a refresh token
 * used twice revokes the whole grant there). The primary is killed (SIGKILL) while one session's renewal is under way
 * at the provider (its refresh token already rotated, its new record not yet in Redis) and while the other sessions'
 * tokens expire.
 */
let topology: SentinelTopology
beforeAll(async () => {
  topology = await startSentinelTopology()
}, 60_000)
afterAll(() => topology?.stop())
const stack = useOidcStack({ instances: 2, provider: { accessTokenTtl: 4 }, redisEnv: () => topology.env })

const USERS = ['admin', 'sale', 'viewer']

describe('Redis Sentinel: OpenID renewals while the primary is killed', () => {
  it('renews each session once across the failover on both instances: no refresh token used twice, no session lost, failures only in its window', async () => {
    printWarningsOnFailure(() => stack.gateways)
    const [a, b] = stack.gateways.map(gateway => gateway.url) as [string, string]
    const { agents, tokens } = await signedInOnBoth(stack, USERS)
    await until(() => redisCli(topology.primaryPort()!, 'WAIT', '1', '1000') === '1', 'the primary\'s writes on its replica', 15_000)
    const before = { ...stack.provider.counters }

    // The first session's renewal on A is held at the provider, its refresh token rotated, until the primary is dead.
    const primary = topology.nodes.find(node => node.port === topology.primaryPort())!
    const { killedAt, failover } = await renewalHeldAcrossKill(stack, agents, tokens, primary, () => topology.failover())

    // Each session on both instances in turn until each has been renewed three times after the failover, the first
    // one on B first (support/oidc-failover.ts).
    const load = startRenewalLoad(agents, [a, b], tokens)
    await failover
    await until(async () => await ready(a) && await ready(b), 'both instances ready on the new primary', 15_000)
    await load.finish(Date.now())
    await expectRenewedOnce(stack, agents, tokens, load, killedAt, before)
  })
})
