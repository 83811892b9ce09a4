import { expect } from 'vitest'
import type { USERS } from '../../dev/iam.mjs'
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

/** Token sizes of the development IAM's `fill-<bytes>` accounts (fullestLogin): around the 4 KB cookie's limit. */
const FILL_BYTES = { from: 1200, to: 2800 }

/**
 * Accounts for the development IAM (`useStack({ iam: { accounts: fillAccounts() } })`) whose token is `fill-<bytes>`
 * random bytes, with no role or permission the cookie budget could drop: one of them fills the 4 KB cookie.
 */
export function fillAccounts(): typeof USERS {
  const accounts: typeof USERS = {}
  for (let bytes = FILL_BYTES.from; bytes <= FILL_BYTES.to; bytes++) {
    accounts[`fill-${bytes}`] = { password: 'fill123', fullName: 'Đầy Cookie', email: 'fill@example.vn', roles: [], authorization: [], tokenBytes: bytes }
  }
  return accounts
}

/**
 * The `fill-<bytes>` account (fillAccounts) whose login gives the largest session cookie the gateway sends: the one with
 * the largest token that still fits the 4 KB budget (a larger one is the budget's 500). Found by halving, logging in
 * straight to `gateway`.
 */
export async function fullestLogin(gateway: RunningGateway): Promise<{ username: string, password: string, setCookie: string }> {
  let [fits, tooLarge] = [FILL_BYTES.from, FILL_BYTES.to + 1]
  const login = (bytes: number) => postLogin(gateway, { username: `fill-${bytes}`, password: 'fill123' })
  const first = await login(fits)
  expect(first.status).toBe(200)
  let setCookie = (first.headers['set-cookie'] as string[]).find(line => line.startsWith('svc_session='))!
  while (tooLarge - fits > 1) {
    const middle = Math.floor((fits + tooLarge) / 2)
    const answer = await login(middle)
    if (answer.status !== 200) {
      expect(answer.status).toBe(500)
      tooLarge = middle
      continue
    }
    fits = middle
    setCookie = (answer.headers['set-cookie'] as string[]).find(line => line.startsWith('svc_session='))!
  }
  expect(tooLarge).toBeLessThanOrEqual(FILL_BYTES.to)
  return { username: `fill-${fits}`, password: 'fill123', setCookie }
}
