import { expect } from 'vitest'
import { cookiePair, type RunningGateway } from './gateway'
import { rawRequest, type RawAnswer } from './raw-http'

/** POST /auth/login with a JSON body (and any extra headers), sent byte for byte. */
export function postLogin(gateway: RunningGateway, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return rawRequest(`${gateway.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
}

/** The `svc_session=…` pair an answer sets (to send back as a Cookie header). */
export function sessionCookieOf(answer: { headers: Record<string, string | string[] | undefined> }): string {
  return cookiePair((answer.headers['set-cookie'] as string[]).find(line => line.startsWith('svc_session='))!)
}

/** Logs in through a gateway, expecting 200, and returns the `svc_session=…` pair. */
export async function loginCookie(gateway: RunningGateway, username: string, password: string): Promise<string> {
  const answer = await postLogin(gateway, { username, password })
  expect(answer.status).toBe(200)
  return sessionCookieOf(answer)
}
