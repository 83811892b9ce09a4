import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cookieAgent, logInWithProvider, untilTokenAge, useOidcStack, type CookieAgent } from '../support/oidc'
import { apiGet, holdNextTokenResponse } from '../support/oidc-failover'
import { documentedAclRule, startTlsRedis, type TlsRedis } from '../support/redis-ha'

/**
 * OpenID sessions on two instances whose Redis (TLS, a private CA) lets them in only as the ACL user of
 * docs/operations.md: the login's token record and indexes, the sessions list, a renewal one instance makes while the
 * other waits for its refresh lock (GET, SET NX, EXISTS, the release script), a session ended from another, a
 * back-channel logout and a logout all work, and Redis refused no command (ACL LOG empty). The line is checked by
 * what the gateway sends, not by a list.
 */
const PASSWORD = 'acl-user-Pw-31f0a2'
let redis: TlsRedis
beforeAll(async () => {
  redis = await startTlsRedis(documentedAclRule(), PASSWORD)
})
afterAll(() => redis?.stop())
const stack = useOidcStack({ instances: 2, provider: { accessTokenTtl: 4 }, redisEnv: () => ({ APP_REDIS_URL: redis.url, APP_REDIS_TLS_CA: redis.caFile }) })

const sessionAt = async (agent: CookieAgent, gateway: string) => (await (await agent.go(`${gateway}/auth/session`)).json()).user as { id: string } | null

async function signedIn(gateway: string, username: string): Promise<CookieAgent> {
  const agent = cookieAgent()
  const { url } = await logInWithProvider(agent, gateway, stack.provider.url, { username, password: `${username}123` })
  expect(url.href).toBe(`${gateway}/`)
  return agent
}

describe('OpenID Connect with the documented Redis ACL user', () => {
  it('logs in, lists, renews with one instance waiting for the other\'s lock, ends a session from another, logs out by back-channel and by the user: Redis refuses nothing', async () => {
    const [a, b] = stack.gateways.map(gateway => gateway.url) as [string, string]
    const admin = await signedIn(a, 'admin')
    const first = await apiGet(admin, a)
    expect(first).toMatchObject({ status: 200, bearer: expect.stringMatching(/^Bearer /) })
    expect((await apiGet(admin, b)).bearer).toBe(first.bearer)
    const listed = await (await admin.go(`${b}/auth/sessions`)).json() as { sessions: Array<{ current: boolean }> }
    expect(listed.sessions.map(session => session.current)).toEqual([true])

    // The renewal held at the provider on A (A holds the session's lock) while B asks: B waits on the lock, then
    // takes A's result from the store.
    await untilTokenAge(admin, 3_400)
    const refreshes = stack.provider.counters.refresh_token
    const hold = holdNextTokenResponse(stack.provider)
    const onA = apiGet(admin, a)
    await hold.atProvider
    const onB = apiGet(admin, b)
    await sleep(500)
    hold.release()
    const [renewedOnA, renewedOnB] = await Promise.all([onA, onB])
    expect(renewedOnA).toMatchObject({ status: 200, bearer: expect.stringMatching(/^Bearer /) })
    expect(renewedOnA.bearer).not.toBe(first.bearer)
    expect(renewedOnB.bearer).toBe(renewedOnA.bearer)
    expect(stack.provider.counters.refresh_token - refreshes).toBe(1)

    // A second session of the admin's, ended from the first (the sessions list's entry and its tokens dropped).
    const elsewhere = await signedIn(b, 'admin')
    const ended = await admin.go(`${a}/auth/sessions/end-others`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(await ended.json()).toEqual({ ended: 1 })
    await expect.poll(() => sessionAt(elsewhere, b), { timeout: 2_000 }).toBeNull()

    // The provider ends another user's session by back-channel logout; the admin logs out on B.
    const sale = await signedIn(a, 'sale')
    expect((await stack.provider.backchannelLogout({ sub: 'u-sale' })).map((delivery: { ok: boolean }) => delivery.ok)).toEqual([true])
    await expect.poll(() => sessionAt(sale, b), { timeout: 2_000 }).toBeNull()
    expect((await admin.go(`${b}/auth/logout`)).status).toBe(302)
    await expect.poll(() => sessionAt(admin, a), { timeout: 2_000 }).toBeNull()

    expect(redis.cli('ACL', 'LOG')).toBe('')
    for (const gateway of stack.gateways) expect(gateway.output()).not.toContain(PASSWORD)
  })
})
