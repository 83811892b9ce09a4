import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { printWarningsOnFailure } from '../support/gateway'
import { useOidcStack } from '../support/oidc'
import { expectRenewedOnce, ready, renewalHeldAcrossKill, signedInOnBoth, startRenewalLoad } from '../support/oidc-failover'
import { keySlot, redisCli, startRedisCluster, until, type RedisCluster } from '../support/redis-ha'
import { openSessionCookie } from '../support/sealed'

/**
 * OpenID sessions on two gateway instances sharing a six-node Redis Cluster (three primaries, a replica each, real
 * processes, a node failed after 1 s), the development provider with 4-second access tokens and rotating refresh
 * tokens (a refresh token used twice revokes the whole grant there). The primary of the slot of one session's token
 * record is killed (SIGKILL) while that session's renewal is under way at the provider (its refresh token already
 * rotated, its new record not yet in Redis); after the failover that slot is moved to another primary while every
 * session keeps renewing. The session's refresh lock is a key of another slot, served by a primary that stays up.
 */
let cluster: RedisCluster
beforeAll(async () => {
  cluster = await startRedisCluster()
}, 60_000)
afterAll(() => cluster?.stop())
const stack = useOidcStack({ instances: 2, provider: { accessTokenTtl: 4 }, redisEnv: () => cluster.env })

const USERS = ['admin', 'sale', 'viewer']
const ownerOf = (slot: number) => cluster.owner(slot)!

describe('Redis Cluster: OpenID renewals while a primary is killed and a slot moved', () => {
  it('renews each session once across the failover and the move on both instances: no refresh token used twice, no session lost, failures only in the window', async () => {
    printWarningsOnFailure(() => stack.gateways)
    const [a, b] = stack.gateways.map(gateway => gateway.url) as [string, string]
    const { agents, tokens } = await signedInOnBoth(stack, USERS)
    // The held session's record (server/oidc/redis-token-store.ts KEY.record) and refresh lock (KEY.lock): their slots.
    const sid = openSessionCookie(agents[0]!.jar.get('svc_session')!, 'session-oidc').sid
    const recordSlot = keySlot(`svc:oidc:tokens:${sid}`)
    const lockSlot = keySlot(`svc:oidc:lock:${sid}`)
    expect(redisCli(ownerOf(recordSlot).port, 'EXISTS', `svc:oidc:tokens:${sid}`)).toBe('1')
    // The lock on a primary that stays up: its release is taken while the record is not (moved there if need be).
    if (ownerOf(lockSlot).port === ownerOf(recordSlot).port) await cluster.moveSlot(lockSlot)
    expect(ownerOf(lockSlot).port).not.toBe(ownerOf(recordSlot).port)
    await until(() => cluster.primaries().every(p => redisCli(p.port, 'WAIT', '1', '1000') === '1'), 'the primaries\' writes on their replicas', 15_000)
    const before = { ...stack.provider.counters }

    // The first session's renewal on A is held at the provider, its refresh token rotated, until the primary is dead.
    const primary = cluster.nodes.find(node => node.port === ownerOf(recordSlot).port)!
    const { killedAt, failover } = await renewalHeldAcrossKill(stack, agents, tokens, primary, () => cluster.failSlotPrimary(recordSlot))

    // Every session renews on both instances through the failover and the move, and once more after the move.
    let movedAt = Number.POSITIVE_INFINITY
    const load = startRenewalLoad(agents, [a, b], tokens, n => load.renewedSince(n, movedAt) >= 1)
    await failover
    await until(async () => await ready(a) && await ready(b), 'both instances ready on the new primary', 15_000)
    const readyAt = Date.now()
    const finished = load.finish(readyAt)
    // The slot moved while the sessions renew (the record's keys migrated: MOVED and ASK followed by the instances),
    // once the held session has renewed after the failover (or could have: the verdict below says why not).
    await until(() => load.renewedSince(0, readyAt) >= 1 || Date.now() - readyAt > 8_000, 'the held session renewed', 10_000)
    const moved = await cluster.moveSlot(recordSlot)
    expect(moved.to).not.toBe(moved.from)
    movedAt = Date.now()
    await finished
    await expectRenewedOnce(stack, agents, tokens, load, killedAt, before)
    expect(redisCli(moved.to, 'EXISTS', `svc:oidc:tokens:${sid}`)).toBe('1')
  })
})
