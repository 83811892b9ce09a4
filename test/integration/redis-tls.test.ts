import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningGateway } from '../support/gateway'
import { loginCookie, postLogin } from '../support/login'
import { rawRequest } from '../support/raw-http'
import { documentedAclRule, startTlsRedis, until, type TlsRedis } from '../support/redis-ha'
import { useStack } from '../support/stack'

/**
 * Redis over TLS only (rediss://), its certificate signed by a private CA the test makes, the gateway logged in as an
 * ACL user with exactly the rights docs/operations.md lists: logins, limits, logouts and /readyz work across two
 * instances, Redis refused nothing (ACL LOG empty), and the password is in no log line.
 */
const stack = useStack()
const PASSWORD = 'acl-user-Pw-7c1e9d'
let redis: TlsRedis
let gateways: RunningGateway[]

beforeAll(async () => {
  redis = await startTlsRedis(documentedAclRule(), PASSWORD)
  const env = { APP_REDIS_URL: redis.url, APP_REDIS_TLS_CA: redis.caFile, APP_RATE_LIMIT_PER_USER: '2' }
  gateways = await Promise.all([stack.gatewayWith(env), stack.gatewayWith(env)])
  for (const gateway of gateways) await until(async () => (await rawRequest(`${gateway.url}/readyz`)).status === 200, `${gateway.url} ready`, 15_000)
})
afterAll(() => redis?.stop())

describe('Redis over TLS with a private CA and an ACL user', () => {
  it('shares limits and logouts between two instances with only the documented rights, and logs no password', async () => {
    const [first, second] = gateways as [RunningGateway, RunningGateway]
    const cookie = await loginCookie(first, 'sale', 'sale123')
    expect((await rawRequest(`${second.url}/auth/logout`, { headers: { cookie } })).status).toBe(302)
    await expect.poll(async () => JSON.parse((await rawRequest(`${first.url}/auth/session`, { headers: { cookie } })).body).user, { timeout: 2_000 }).toBeNull()
    expect((await postLogin(first, { username: 'viewer', password: 'wrong' })).status).toBe(401)
    expect((await postLogin(second, { username: 'viewer', password: 'wrong' })).status).toBe(401)
    expect((await postLogin(first, { username: 'viewer', password: 'viewer123' })).status).toBe(429)
    expect(JSON.parse((await rawRequest(`${second.url}/readyz`)).body)).toMatchObject({ status: 'ready', checks: { redis: 'up' } })

    expect(redis.cli('ACL', 'LOG')).toBe('')
    expect(Number(redis.cli('EVAL', 'return #redis.call("keys", "svc:*")', '0'))).toBeGreaterThanOrEqual(3)
    for (const gateway of gateways) {
      expect(gateway.output()).toContain('"msg":"Redis: 127.0.0.1:')
      expect(gateway.output()).not.toContain(PASSWORD)
      expect(gateway.output()).not.toContain(encodeURIComponent(PASSWORD))
    }
  })

  it('refuses to start with a CA file that is not there, naming the variable and not the password', async () => {
    const refused = await stack.gatewayWith({ APP_REDIS_URL: redis.url, APP_REDIS_TLS_CA: '/nonexistent/ca.pem' }).then(() => undefined, (error: Error) => error.message)
    expect(refused).toMatch(/^gateway exited \(1\):/)
    expect(refused).toContain('APP_REDIS_TLS_CA: không đọc được tệp /nonexistent/ca.pem (ENOENT).')
    expect(refused).not.toContain(PASSWORD)
  })
})
