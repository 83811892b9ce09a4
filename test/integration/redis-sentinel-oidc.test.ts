import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { printWarningsOnFailure } from '../support/gateway'
import { useOidcStack } from '../support/oidc'
import { apiGet, expectRenewedOnce, holdNextTokenResponse, ready, signedInOnBoth, startRenewalLoad } from '../support/oidc-failover'
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

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))
const USERS = ['admin', 'sale', 'viewer']

describe('Redis Sentinel: OpenID renewals while the primary is killed', () => {
  it('renews each session once across the failover on both instances: no refresh token used twice, no session lost, failures only in its window', async () => {
    printWarningsOnFailure(() => stack.gateways)
    const [a, b] = stack.gateways.map(gateway => gateway.url) as [string, string]
    const { agents, tokens } = await signedInOnBoth(stack, USERS)
    await until(() => redisCli(topology.primaryPort()!, 'WAIT', '1', '1000') === '1', 'the primary\'s writes on its replica', 15_000)
    const before = { ...stack.provider.counters }

    // The first session's renewal on A is held at the provider, its refresh token rotated, until the primary is dead.
    const hold = holdNextTokenResponse(stack.provider)
    await sleep(3_300) // every session's 4-s token is due for renewal
    const held = apiGet(agents[0]!, a)
    await hold.atProvider
    const primary = topology.nodes.find(node => node.port === topology.primaryPort())!
    const killedAt = Date.now()
    const failover = topology.failover()
    await until(() => !primary.alive(), 'the primary killed', 5_000)
    hold.release()
    const renewedDuring = await held
    expect(renewedDuring).toMatchObject({ status: 200, bearer: expect.stringMatching(/^Bearer /) })
    tokens[0]!.add(renewedDuring.bearer!)
    // The case at hand: Redis did not take the renewed record (the provider has rotated the refresh token meanwhile).
    await expect.poll(() => stack.gateways[0]!.stdout(), { timeout: 5_000 }).toMatch(/không lưu được token OIDC mới vào Redis/)

    // Each session on both instances in turn until each has been renewed three times after the failover, the first
    // one on B first (support/oidc-failover.ts).
    const load = startRenewalLoad(agents, [a, b], tokens)
    await failover
    await until(async () => await ready(a) && await ready(b), 'both instances ready on the new primary', 15_000)
    await load.finish(Date.now())
    await expectRenewedOnce(stack, agents, tokens, load, killedAt, before)
  })
})
