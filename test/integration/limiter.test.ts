import { describe, expect, it } from 'vitest'
import { freePort, logEntries, type RunningGateway } from '../support/gateway'
import { rawRequest } from '../support/raw-http'
import { redisClient } from '../support/redis'
import { startScriptedIam } from '../support/scripted-iam'
import { useStack } from '../support/stack'

const TOO_MANY = /^Bạn đã thử quá nhiều lần\. Vui lòng thử lại sau \d+ giây\.$/

// No backend: its gateways say so, or /readyz (which tests here wait for) stays 503 for the target it lacks.
const stack = useStack({ iam: { slowMs: 2_000 }, backend: 'none', env: { APP_API_PROXY: 'false' } })

function attempt(gateway: RunningGateway, path: '/auth/login' | '/auth/otp/send', username: string, password: string, headers: Record<string, string> = {}) {
  return rawRequest(gateway.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ username, password }) })
}
const login = (gateway: RunningGateway, username: string, password: string, headers?: Record<string, string>) => attempt(gateway, '/auth/login', username, password, headers)
const from = (ip: string) => ({ 'x-forwarded-for': ip })

async function statuses(count: number, run: () => Promise<{ status: number }>): Promise<number[]> {
  const seen: number[] = []
  for (let i = 0; i < count; i++) seen.push((await run()).status)
  return seen
}

describe('what the limits count', () => {
  it('refuses the 6th failure of one user with APP_RATE_LIMIT_PER_USER unset (the documented default, 5)', async () => {
    const gateway = await stack.gatewayWith()
    expect(await statuses(6, () => login(gateway, 'viewer', 'wrong'))).toEqual([401, 401, 401, 401, 401, 429])
    expect(JSON.parse((await login(gateway, 'viewer', 'viewer123')).body).statusMessage).toMatch(TOO_MANY)
  })

  it('counts nothing for IAM 5xx or an unreachable IAM', async () => {
    const gateway = await stack.gatewayWith({ APP_RATE_LIMIT_PER_USER: '1' })
    expect(await statuses(3, () => login(gateway, 'http-503', 'x'))).toEqual([503, 503, 503])
    stack.iam.state.scenario = 'down'
    try {
      expect(await statuses(3, () => login(gateway, 'viewer', 'x'))).toEqual([502, 502, 502])
    }
    finally {
      stack.iam.state.scenario = 'normal'
    }
    expect(await statuses(2, () => login(gateway, 'viewer', 'x'))).toEqual([401, 429])
  })

  it('counts nothing for an IAM timeout', async () => {
    const gateway = await stack.gatewayWith({ APP_RATE_LIMIT_PER_USER: '1', APP_AUTH_TIMEOUT: '1' })
    stack.iam.state.scenario = 'slow'
    try {
      expect((await login(gateway, 'viewer', 'x')).status).toBe(504)
    }
    finally {
      stack.iam.state.scenario = 'normal'
    }
    expect(await statuses(2, () => login(gateway, 'viewer', 'x'))).toEqual([401, 429])
  })

  it('counts an IAM HTTP 401 without an envelope', async () => {
    const scripted = await startScriptedIam()
    try {
      scripted.answer('401 Unauthorized', 'no', 'text/plain')
      const gateway = await stack.gatewayWith({ APP_AUTH_BASE_URL: scripted.url, APP_RATE_LIMIT_PER_USER: '1' })
      const first = await login(gateway, 'viewer', 'x')
      expect(first.status).toBe(401)
      expect(JSON.parse(first.body).statusMessage).toBe('IAM trả lỗi HTTP 401.')
      const second = await login(gateway, 'viewer', 'x')
      expect(second.status).toBe(429)
      expect(JSON.parse(second.body).statusMessage).toMatch(TOO_MANY)
      expect(scripted.calls()).toBe(1)
    }
    finally {
      await scripted.close()
    }
  })

  it('does not clear the count on a successful OTP send (a login does)', async () => {
    const gateway = await stack.gatewayWith({ APP_RATE_LIMIT_PER_USER: '2' })
    expect((await login(gateway, 'otp.sms', 'wrong')).status).toBe(401)
    expect((await attempt(gateway, '/auth/otp/send', 'otp.sms', 'otp123')).status).toBe(200)
    expect((await login(gateway, 'otp.sms', 'wrong')).status).toBe(401)
    expect((await attempt(gateway, '/auth/otp/send', 'otp.sms', 'otp123')).status).toBe(429)
  })

  it('holds an address back across usernames with the per-IP limit', async () => {
    const gateway = await stack.gatewayWith({ APP_RATE_LIMIT_PER_USER: '10', APP_RATE_LIMIT_PER_IP: '3' })
    for (const name of ['a1', 'a2', 'a3']) expect((await login(gateway, name, 'x')).status).toBe(401)
    expect((await login(gateway, 'a4', 'x')).status).toBe(429)
    expect((await login(gateway, 'admin', 'admin123')).status).toBe(429)
  })

  it('turns a limit off at the route with 0', async () => {
    const gateway = await stack.gatewayWith({ APP_RATE_LIMIT_PER_USER: '0', APP_RATE_LIMIT_PER_IP: '0' })
    expect(await statuses(12, () => login(gateway, 'viewer', 'x'))).toEqual(Array<number>(12).fill(401))
    expect((await login(gateway, 'viewer', 'viewer123')).status).toBe(200)
  })
})

describe('what the audit lines keep of a client', () => {
  it('caps a 65,000-character username at 128 characters, marked as cut, on refusal and on 429 alike', async () => {
    const gateway = await stack.gatewayWith({ APP_RATE_LIMIT_PER_USER: '1' })
    const username = 'u'.repeat(65_000)
    expect(await statuses(2, () => login(gateway, username, 'x'))).toEqual([401, 429])
    const audits = () => logEntries(gateway.stdout()).filter(entry => entry.type === 'audit')
    await expect.poll(() => audits().map(entry => entry.event)).toEqual(['login.refused', 'login.limited'])
    for (const entry of audits()) expect(entry.username).toBe(`${'u'.repeat(128)}…[+64872]`)
    expect(gateway.stdout()).not.toContain('u'.repeat(129))
  })
})

describe('counters an attacker cannot push out', () => {
  it('keeps a blocking counter through a flood of fresh usernames from another address', async () => {
    const gateway = await stack.gatewayWith({ APP_TRUST_PROXY: '1', APP_RATE_LIMIT_PER_USER: '3', APP_RATE_LIMIT_PER_IP: '1000', APP_RATE_LIMIT_MAX_KEYS: '100' })
    expect(await statuses(3, () => login(gateway, 'viewer', 'x', from('10.0.0.1')))).toEqual([401, 401, 401])
    expect((await login(gateway, 'viewer', 'viewer123', from('10.0.0.1'))).status).toBe(429)
    const flood = await Promise.all(Array.from({ length: 300 }, (_, i) => login(gateway, `flood-${i}`, 'x', from('10.0.0.2'))))
    expect(flood.every(answer => answer.status === 401)).toBe(true)
    // Five more guesses would have come with an evicted counter; the real password is still refused.
    expect((await login(gateway, 'viewer', 'viewer123', from('10.0.0.1'))).status).toBe(429)
    // Room is still made for honest users (the flood's counters are not blocking).
    expect((await login(gateway, 'sale', 'sale123', from('10.0.0.3'))).status).toBe(200)
  })

  it('believes only an X-Forwarded-For address that parses as an IP, and counts IPv6 by its /64', async () => {
    const gateway = await stack.gatewayWith({ APP_TRUST_PROXY: '1', APP_RATE_LIMIT_PER_USER: '2' })
    // A huge or garbage value is the socket's address (127.0.0.1), not a fresh key per request.
    expect((await login(gateway, 'admin', 'x', from('x'.repeat(15_000)))).status).toBe(401)
    expect((await login(gateway, 'admin', 'x', from('not-an-ip'))).status).toBe(401)
    expect((await login(gateway, 'admin', 'x')).status).toBe(429)

    expect(await statuses(2, () => login(gateway, 'sale', 'x', from('2001:db8:1:2::1')))).toEqual([401, 401])
    expect((await login(gateway, 'sale', 'x', from('2001:db8:1:2:ffff:ffff:ffff:9')))).toMatchObject({ status: 429 })
    expect((await login(gateway, 'sale', 'x', from('2001:db8:1:3::1'))).status).toBe(401)
  })

  it('creates no Redis key for a refused attempt', async () => {
    const redis = await stack.redisServer()
    const client = await redisClient(redis.url, { lazyConnect: true })
    try {
      await client.connect()
      const gateway = await stack.gatewayWith({ APP_REDIS_URL: redis.url, APP_TRUST_PROXY: '1', APP_RATE_LIMIT_PER_IP: '2' })
      // Wait until the gateway's counters are in Redis (probes from addresses of their own).
      let probe = 0
      await expect.poll(async () => {
        await login(gateway, 'probe', 'x', from(`10.8.8.${++probe}`))
        return client.dbsize()
      }, { timeout: 5_000 }).toBeGreaterThan(0)
      expect(await statuses(2, () => login(gateway, 'viewer', 'x', from('10.9.9.9')))).toEqual([401, 401])
      const keys = await client.dbsize()
      for (let i = 0; i < 20; i++) expect((await login(gateway, `fresh-${i}`, 'x', from('10.9.9.9'))).status).toBe(429)
      expect(await client.dbsize()).toBe(keys)
    }
    finally {
      client.disconnect()
      await redis.stop()
    }
  })
})

describe('what is counted while Redis is away', () => {
  const ready = (gateway: RunningGateway) => expect.poll(async () => (await rawRequest(`${gateway.url}/readyz`)).status, { timeout: 10_000 }).toBe(200)

  /** The value and time left of the one key of a kind (`u`: IP and username, `ip`) in Redis. */
  async function counter(client: Awaited<ReturnType<typeof redisClient>>, kind: 'u' | 'ip') {
    const keys = await client.keys(`svc:rl:${kind}:*`)
    expect(keys).toHaveLength(1)
    return { count: Number(await client.get(keys[0]!)), ttlMs: await client.pttl(keys[0]!) }
  }

  it('carries failures counted before Redis connects into it: 3 before, 2 after, the next is 429', async () => {
    const port = await freePort()
    const gateway = await stack.gatewayWith({ APP_REDIS_URL: `redis://127.0.0.1:${port}`, APP_RATE_LIMIT_PER_USER: '5' })
    expect(await statuses(3, () => login(gateway, 'viewer', 'x'))).toEqual([401, 401, 401])
    const redis = await stack.redisServer(port)
    const client = await redisClient(redis.url)
    try {
      await ready(gateway)
      expect(await statuses(3, () => login(gateway, 'viewer', 'x'))).toEqual([401, 401, 429])
      // Each key's window is the one it began in (900 s), not a new one from when Redis came.
      for (const kind of ['u', 'ip'] as const) {
        const { count, ttlMs } = await counter(client, kind)
        expect(count).toBe(5)
        expect(ttlMs).toBeGreaterThan(0)
        expect(ttlMs).toBeLessThanOrEqual(900_000)
      }
    }
    finally {
      client.disconnect()
      await redis.stop()
    }
  })

  it('carries what an outage counted into a Redis restarted empty, and an accepted login meanwhile clears what came before it', async () => {
    const redis = await stack.redisServer()
    const gateway = await stack.gatewayWith({ APP_REDIS_URL: redis.url, APP_RATE_LIMIT_PER_USER: '5' })
    await ready(gateway)
    await redis.stop()
    // Once the gateway knows Redis is gone (its warning): a call sent to Redis before it noticed may have run there,
    // and is rightly not carried (so never counted twice); on a loaded machine the first login could be that call.
    await expect.poll(() => logEntries(gateway.stdout()).some(entry => String(entry.msg).startsWith('Redis không dùng được')), { timeout: 10_000 }).toBe(true)
    expect(await statuses(2, () => login(gateway, 'viewer', 'x'))).toEqual([401, 401])
    expect((await login(gateway, 'viewer', 'viewer123')).status).toBe(200)
    expect((await login(gateway, 'viewer', 'x')).status).toBe(401)
    const empty = await stack.redisServer(redis.port)
    const client = await redisClient(empty.url)
    try {
      // The failure after the login, and the address's three failures (an accepted attempt is not one).
      await expect.poll(async () => (await client.keys('svc:rl:*')).length, { timeout: 10_000 }).toBe(2)
      expect((await counter(client, 'u')).count).toBe(1)
      expect((await counter(client, 'ip')).count).toBe(3)
      expect(await statuses(5, () => login(gateway, 'viewer', 'x'))).toEqual([401, 401, 401, 401, 429])
    }
    finally {
      client.disconnect()
      await empty.stop()
    }
  })
})
