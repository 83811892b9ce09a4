import { expect } from 'vitest'
import type { RunningGateway } from './gateway'
import { postLogin, sessionCookieOf } from './login'
import { rawRequest } from './raw-http'

/** The user a session cookie opens on a gateway (null: no session), or throws on an answer other than 200. */
export async function sessionUser(gateway: RunningGateway, cookie: string): Promise<string | null> {
  const answer = await rawRequest(`${gateway.url}/auth/session`, { headers: { cookie } })
  if (answer.status !== 200) throw new Error(`GET /auth/session ${answer.status}`)
  return (JSON.parse(answer.body) as { user: { id: string } | null }).user?.id ?? null
}

export interface LogoutLoad {
  /** Every cookie logged out so far (the logout answered 302). */
  loggedOut: string[]
  /** Each failed round: when (s since the start) and what failed. */
  failures: string[]
  /** Requests sent so far. */
  requests: () => number
  /** Stops the loop after its round; resolves once it has. */
  stop: () => Promise<void>
}

/**
 * Two instances in turn: log in on one, read the session and log out on the other, a round every 50 ms at most
 * (paced, so that checking every logout at the end stays short), until stopped.
 */
export function startLogoutLoad(first: RunningGateway, second: RunningGateway): LogoutLoad {
  const load: Omit<LogoutLoad, 'stop' | 'requests'> = { loggedOut: [], failures: [] }
  const startedAt = Date.now()
  let requests = 0
  let running = true
  const loop = (async () => {
    for (let n = 0; running; n++) {
      const [a, b] = n % 2 ? [first, second] : [second, first]
      const pace = new Promise(resolve => setTimeout(resolve, 50))
      requests += 3
      try {
        const login = await postLogin(a, { username: 'sale', password: 'sale123' })
        if (login.status !== 200) throw new Error(`login ${login.status}`)
        const cookie = sessionCookieOf(login)
        if (await sessionUser(b, cookie) !== 'u-sale') throw new Error('session read')
        const out = await rawRequest(`${b.url}/auth/logout`, { headers: { cookie } })
        if (out.status !== 302) throw new Error(`logout ${out.status}`)
        load.loggedOut.push(cookie)
      }
      catch (error) {
        load.failures.push(`${((Date.now() - startedAt) / 1000).toFixed(1)} s: ${(error as Error).message}`)
      }
      await pace
    }
  })()
  return {
    ...load,
    requests: () => requests,
    stop: async () => {
      running = false
      await loop
    },
  }
}

/** How many of the logged-out cookies still open a session on any of the gateways (0: every logout holds). */
export async function sessionsLeft(cookies: readonly string[], gateways: readonly RunningGateway[]): Promise<number> {
  const users = await Promise.all(cookies.flatMap(cookie => gateways.map(gateway => sessionUser(gateway, cookie))))
  return users.filter(id => id !== null).length
}

/** Every logout of `cookies` holds on every one of the gateways within 2 s from now (a failover test's verdict). */
export async function expectLoggedOutEverywhereWithin2s(cookies: readonly string[], gateways: readonly RunningGateway[]): Promise<void> {
  const started = Date.now()
  await expect.poll(() => sessionsLeft(cookies, gateways), { timeout: 2_000, interval: 100 }).toBe(0)
  expect(Date.now() - started).toBeLessThanOrEqual(2_000)
}
