import { randomUUID } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { freePort, logEntries, type RunningGateway } from '../support/gateway'
import { loginCookie } from '../support/login'
import { rawRequest } from '../support/raw-http'
import { redisClient, waitForClients, type RunningRedis } from '../support/redis'
import { openSessionCookie, resealedSessionCookie } from '../support/sealed'
import { useStack } from '../support/stack'

/**
 * A logout the gateway acknowledged holds through Redis faults, with real redis-server processes (without
 * persistence: a restarted one comes back empty): in each case the logged-out cookie is no session on every instance
 * within 2 s of Redis's return.
 */
const stack = useStack()
const scratch = mkdtempSync(join(tmpdir(), 'svc-revocation-journal-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** Each instance holds three Redis connections: the limiter's, and the revocations' two. */
const CONNECTIONS = 3

async function user(gateway: RunningGateway, cookie: string): Promise<string | null> {
  const answer = await rawRequest(`${gateway.url}/auth/session`, { headers: { cookie } })
  expect(answer.status).toBe(200)
  return (JSON.parse(answer.body) as { user: { id: string } | null }).user?.id ?? null
}

const logout = async (gateway: RunningGateway, cookie: string) => expect((await rawRequest(`${gateway.url}/auth/logout`, { headers: { cookie } })).status).toBe(302)

/** Milliseconds until `check` holds, polled every 50 ms; fails past 2 s. */
async function within2s(check: () => Promise<boolean>): Promise<number> {
  const started = Date.now()
  await expect.poll(check, { timeout: 2_000, interval: 50 }).toBe(true)
  return Date.now() - started
}

/** Two instances sharing a fresh redis-server, ready (connected). */
async function pair(extra: Record<string, string> = {}): Promise<{ redis: RunningRedis, first: RunningGateway, second: RunningGateway }> {
  const redis = await stack.redisServer()
  const [first, second] = await Promise.all([stack.gatewayWith({ APP_REDIS_URL: redis.url, ...extra }), stack.gatewayWith({ APP_REDIS_URL: redis.url })])
  await waitForClients(redis.url, 2 * CONNECTIONS)
  return { redis, first, second }
}

describe('revocations through Redis faults', () => {
  it('a logout during an outage holds everywhere within 2 s of Redis\'s return', async () => {
    const { redis, first, second } = await pair()
    const cookie = await loginCookie(first, 'sale', 'sale123')
    expect(await user(second, cookie)).toBe('u-sale')
    await redis.stop()
    await logout(first, cookie)
    expect(await user(first, cookie)).toBeNull()
    const back = await stack.redisServer(redis.port)
    await within2s(async () => await user(second, cookie) === null)
    // An instance started now learns it from Redis.
    const third = await stack.gatewayWith({ APP_REDIS_URL: back.url })
    await within2s(async () => await user(third, cookie) === null)
  })

  it('a logout during an outage survives its instance\'s restart through the journal, and reaches the others once Redis returns', async () => {
    const journal = join(scratch, 'first.jsonl')
    const { redis, first, second } = await pair({ APP_REVOCATION_JOURNAL: journal, APP_SHUTDOWN_TIMEOUT: '1' })
    const cookie = await loginCookie(first, 'viewer', 'viewer123')
    await redis.stop()
    await logout(first, cookie)
    // Asked to stop with a revocation Redis never took: it tries until its drain timeout, then journals it, loudly.
    const exited = new Promise<number | null>(resolve => first.process.once('exit', code => resolve(code)))
    first.process.kill('SIGTERM')
    expect(await exited).toBe(0)
    const unwritten = logEntries(first.stdout()).filter(entry => entry.event === 'revocation.unwritten')
    expect(unwritten).toEqual([expect.objectContaining({ level: 'error', type: 'audit', kind: 'session', userId: 'u-viewer', journal })])
    expect(readFileSync(journal, 'utf8').trim().split('\n')).toHaveLength(1)
    expect(readFileSync(journal, 'utf8')).not.toContain('dev.') // a revocation holds ids, never a token

    // Started again (Redis still down): the journal's logout holds there at once.
    const restarted = await stack.gatewayWith({ APP_REDIS_URL: redis.url, APP_REVOCATION_JOURNAL: journal })
    expect(await user(restarted, cookie)).toBeNull()
    expect(await user(second, cookie)).toBe('u-viewer')
    await stack.redisServer(redis.port)
    await within2s(async () => await user(second, cookie) === null)
    // Redis has it: the journal is done with.
    await expect.poll(() => existsSync(journal)).toBe(false)
  })

  it('a Redis restarted empty while two instances run gets every live revocation back within 2 s', async () => {
    const { redis, first, second } = await pair()
    const [sale, admin] = [await loginCookie(first, 'sale', 'sale123'), await loginCookie(second, 'admin', 'admin123')]
    await logout(first, sale)
    await logout(second, admin)
    const before = await redisClient(redis.url)
    await expect.poll(async () => (await before.keys('svc:rev:s:*')).length).toBe(2)
    before.disconnect()
    await redis.stop()
    const empty = await stack.redisServer(redis.port)
    const client = await redisClient(empty.url)
    try {
      // It has no persistence: the instances find it empty and write what it lost again (on a loaded machine they
      // can be back before this client is: their line, not an empty read, shows the loss).
      await within2s(async () => (await client.keys('svc:rev:s:*')).length === 2)
      await expect.poll(() => first.stdout() + second.stdout()).toMatch(/Redis đã mất dữ liệu thu hồi phiên: ghi lại 2 thu hồi còn hiệu lực/)
      const third = await stack.gatewayWith({ APP_REDIS_URL: empty.url })
      await within2s(async () => await user(third, sale) === null && await user(third, admin) === null)
    }
    finally {
      client.disconnect()
    }
  })

  it('writes a Redis restarted empty back a batch an announcement: 250 revocations hold on every instance, and a third', async () => {
    const { redis, first, second } = await pair()
    const cookie = await loginCookie(first, 'sale', 'sale123')
    const session = openSessionCookie(cookie)
    // 250 sessions of 250 users (sealed as the gateway seals them), revoked through Redis as another instance does.
    const revoked = Array.from({ length: 250 }, (_, n) => ({ sid: randomUUID(), userId: `u-many-${n}` }))
    const cookies = revoked.map(({ sid, userId }) => resealedSessionCookie(cookie, { sid, user: { ...session.user as object, id: userId } }))
    const seed = await redisClient(redis.url)
    await seed.pipeline(revoked.flatMap(({ sid, userId }) => {
      const text = JSON.stringify({ kind: 'session', sid, userId, iat: session.iat })
      return [['set', `svc:rev:s:${sid}`, text, 'PX', '3600000'], ['publish', 'svc:rev', text]]
    })).exec()
    seed.disconnect()
    /** How many of the cookies open a session on a gateway (25 asked at a time). */
    const open = async (gateway: RunningGateway) => {
      let count = 0
      for (let start = 0; start < cookies.length; start += 25) count += (await Promise.all(cookies.slice(start, start + 25).map(c => user(gateway, c)))).filter(id => id !== null).length
      return count
    }
    await expect.poll(async () => await open(first) + await open(second), { timeout: 10_000 }).toBe(0)

    await redis.stop()
    const empty = await stack.redisServer(redis.port)
    const client = await redisClient(empty.url)
    try {
      await within2s(async () => (await client.keys('svc:rev:s:*')).length === revoked.length)
      await expect.poll(() => [first.stdout(), second.stdout()].map(out => /Redis đã mất dữ liệu thu hồi phiên: ghi lại 250 thu hồi/.test(out))).toEqual([true, true])
      // Each instance announced what it wrote back in batches of 200 (2 messages), not a message a revocation (250).
      const published = Number(/cmdstat_publish:calls=(\d+)/.exec(await client.info('commandstats'))?.[1] ?? 0)
      expect(published).toBeLessThanOrEqual(2 * Math.ceil(revoked.length / 200))
      const third = await stack.gatewayWith({ APP_REDIS_URL: empty.url })
      await waitForClients(empty.url, 3 * CONNECTIONS)
      expect([await open(first), await open(second), await open(third)]).toEqual([0, 0, 0])
      // Nothing more than those: the live session of the same token still opens everywhere.
      expect([await user(first, cookie), await user(second, cookie), await user(third, cookie)]).toEqual(['u-sale', 'u-sale', 'u-sale'])
    }
    finally {
      client.disconnect()
    }
  })
})

describe('start-up before Redis', () => {
  it('answers /readyz 503 `starting` until Redis is connected and followed, serves meanwhile (logins counted locally, as in an outage), and a logout made meanwhile reaches Redis', async () => {
    const redisPort = await freePort()
    const url = `redis://127.0.0.1:${redisPort}`
    const early = await stack.gatewayWith({ APP_REDIS_URL: url, APP_RATE_LIMIT_PER_USER: '2' })
    const starting = await rawRequest(`${early.url}/readyz`)
    expect(starting.status).toBe(503)
    expect(JSON.parse(starting.body)).toMatchObject({ status: 'starting', checks: { redis: 'down' } })
    // Served meanwhile, as during an outage: a refused login counts, a logout holds here.
    const refused = await rawRequest(`${early.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'origin': early.url },
      body: JSON.stringify({ username: 'sale', password: 'wrong' }),
    })
    expect(refused.status).toBe(401)
    const cookie = await loginCookie(early, 'sale', 'sale123')
    await logout(early, cookie)
    expect(await user(early, cookie)).toBeNull()
    expect(logEntries(early.stdout()).filter(entry => entry.type === 'ready')).toEqual([])

    const redis = await stack.redisServer(redisPort)
    await expect.poll(async () => (await rawRequest(`${early.url}/readyz`)).status, { timeout: 5_000 }).toBe(200)
    await expect.poll(() => logEntries(early.stdout()).filter(entry => entry.type === 'ready')).toHaveLength(1)
    // The logout made before Redis came reaches an instance that starts now.
    const later = await stack.gatewayWith({ APP_REDIS_URL: redis.url })
    await within2s(async () => await user(later, cookie) === null)
    const client = await redisClient(redis.url)
    try {
      expect(await client.keys('svc:rev:s:*')).toHaveLength(1)
    }
    finally {
      client.disconnect()
    }
  })

  it('keeps trying a first sync that Redis refused on a live connection (a read-only replica), and is ready once it goes through', async () => {
    const redis = await stack.redisServer()
    const admin = await redisClient(redis.url)
    try {
      // A replica of a master that is not there: it answers, and refuses every write (READONLY).
      await admin.call('REPLICAOF', '127.0.0.1', String(await freePort()))
      const gateway = await stack.gatewayWith({ APP_REDIS_URL: redis.url })
      await new Promise(resolve => setTimeout(resolve, 1_500))
      const refused = await rawRequest(`${gateway.url}/readyz`)
      expect(refused.status).toBe(503)
      expect(JSON.parse(refused.body)).toMatchObject({ status: 'starting' })
      await admin.call('REPLICAOF', 'NO', 'ONE')
      await expect.poll(async () => (await rawRequest(`${gateway.url}/readyz`)).status, { timeout: 5_000 }).toBe(200)
    }
    finally {
      admin.disconnect()
    }
  })
})
