import { afterAll, expect } from 'vitest'
import { cookiePair, startGateway, type RunningGateway } from './gateway'
import { rawRequest } from './raw-http'

/**
 * Starts gateways for one test file and stops every one of them when the file ends (registers an afterAll: call it at
 * the file's top level, after the file's own afterAll, so that the gateways stop before their IAM and backend close).
 * `shared()` gives the variables every gateway gets; it is read at each start, so it may use what a beforeAll set up.
 */
export function gatewayPool(shared: () => Record<string, string>): (env?: Record<string, string>) => Promise<RunningGateway> {
  const running: RunningGateway[] = []
  afterAll(async () => {
    await Promise.all(running.splice(0).map(gateway => gateway.stop()))
  })
  return async (env = {}) => {
    const gateway = await startGateway({ ...shared(), ...env })
    running.push(gateway)
    return gateway
  }
}

/** The `svc_session=…` pair an answer sets (to send back as a Cookie header). */
export function sessionCookieOf(answer: { headers: Record<string, string | string[] | undefined> }): string {
  return cookiePair((answer.headers['set-cookie'] as string[]).find(line => line.startsWith('svc_session='))!)
}

/** Logs in through a gateway, expecting 200, and returns the `svc_session=…` pair. */
export async function loginCookie(gateway: RunningGateway, username: string, password: string): Promise<string> {
  const answer = await rawRequest(`${gateway.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) })
  expect(answer.status).toBe(200)
  return sessionCookieOf(answer)
}
