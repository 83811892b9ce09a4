import { setTimeout as sleep } from 'node:timers/promises'
import { expect } from 'vitest'
import { cookieAgent, logInWithProvider, untilTokenAge, type CookieAgent, type DevOidcProvider, type OidcStack } from './oidc'
import { until } from './redis-ha'

/**
 * OpenID renewals across a Redis failover on two gateway instances (test/integration/redis-sentinel-oidc.test.ts,
 * redis-cluster-oidc.test.ts): one renewal held at the development provider until the primary is dead, then every
 * session loaded on both instances, and the verdict both tests give (one refresh grant per new token, no refresh token
 * used twice, no grant refused, every session alive on both, failures only 503 token-store-down within the window).
 */

export const STORE_DOWN = 'Không đọc được kho token của phiên đăng nhập (Redis). Vui lòng thử lại sau giây lát.'

export interface Answer {
  /** When it was asked (ms since the epoch). */
  at: number
  status: number
  bearer?: string
  message?: string
  /** Which session asked (its index), on which instance. */
  session?: number
  gateway?: string
}

/** A proxied GET of a session on an instance: its status and the token the backend got (or the error's message). */
export async function apiGet(agent: CookieAgent, gateway: string): Promise<Answer> {
  const at = Date.now()
  const answer = await agent.go(`${gateway}/api/who`)
  const body = await answer.json() as { headers?: { authorization?: string }, statusMessage?: string }
  return { at, status: answer.status, bearer: body.headers?.authorization, message: body.statusMessage }
}

/**
 * Logs each user in on the first instance (the provider's `<user>123` passwords), then reads each session's token on
 * both: the same on both. The agents, and each session's tokens seen so far.
 */
export async function signedInOnBoth(stack: OidcStack, users: readonly string[]): Promise<{ agents: CookieAgent[], tokens: Set<string>[] }> {
  const [a, b] = stack.gateways.map(gateway => gateway.url) as [string, string]
  const agents: CookieAgent[] = []
  for (const username of users) {
    const agent = cookieAgent()
    const { url } = await logInWithProvider(agent, a, stack.provider.url, { username, password: `${username}123` })
    expect(url.href).toBe(`${a}/`)
    agents.push(agent)
  }
  const tokens = agents.map(() => new Set<string>())
  for (const [n, agent] of agents.entries()) {
    for (const gateway of [a, b]) tokens[n]!.add((await apiGet(agent, gateway)).bearer!)
  }
  expect(tokens.map(seen => seen.size)).toEqual(users.map(() => 1))
  return { agents, tokens }
}

export const ready = async (gateway: string) => (await fetch(`${gateway}/readyz`).catch(() => undefined))?.status === 200

/** The next token response of the provider held: `atProvider` once a grant reached it (refresh token rotated), until `release`. */
export function holdNextTokenResponse(provider: DevOidcProvider): { atProvider: Promise<void>, release: () => void } {
  let release!: () => void
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  let reached!: () => void
  const atProvider = new Promise<void>((resolve) => {
    reached = resolve
  })
  provider.tamperNextTokenResponse(async (body: unknown) => {
    reached()
    await released
    return body
  })
  return { atProvider, release }
}

/**
 * The case both tests are about: the first session's renewal on the first instance held at the provider (its refresh
 * token rotated) while `kill` kills `primary`, the one its new record would go to; then the renewal answers (200, a
 * new token, added to the session's tokens) and the instance says Redis did not take the record. When the primary was
 * killed, and the failover `kill` started.
 */
export async function renewalHeldAcrossKill<T>(stack: OidcStack, agents: CookieAgent[], tokens: Set<string>[], primary: { alive: () => boolean }, kill: () => Promise<T>): Promise<{ killedAt: number, failover: Promise<T> }> {
  const hold = holdNextTokenResponse(stack.provider)
  await untilTokenAge(agents, 3_400) // every session's 4-s token is due for renewal
  const held = apiGet(agents[0]!, stack.gateways[0]!.url)
  await hold.atProvider
  const killedAt = Date.now()
  const failover = kill()
  await until(() => !primary.alive(), 'the primary killed', 5_000)
  hold.release()
  const renewedDuring = await held
  expect(renewedDuring).toMatchObject({ status: 200, bearer: expect.stringMatching(/^Bearer /) })
  tokens[0]!.add(renewedDuring.bearer!)
  // Redis did not take the renewed record (the provider has rotated the refresh token meanwhile).
  await expect.poll(() => stack.gateways[0]!.stdout(), { timeout: 5_000 }).toMatch(/không lưu được token OIDC mới vào Redis/)
  return { killedAt, failover }
}

export interface RenewalLoad {
  answers: Answer[]
  /** Both instances ready on the new primary: the window ends; resolves once every session is done. */
  finish: (readyAt: number) => Promise<void>
  readyAt: () => number
  /** The tokens a session was seen with since `since`. */
  renewedSince: (n: number, since: number) => number
}

/**
 * Each session on both instances in turn, every 100 ms, until each has been renewed three times after the window
 * (and `more(n)` holds, if given), 25 s at most. The first session goes to B alone until B has answered it after the
 * window: B, whose copy is the old record, is the one that renews first (A's new token is still fresh), as it would
 * with the old refresh token. `tokens`: each session's tokens seen, added to.
 */
export function startRenewalLoad(agents: CookieAgent[], [a, b]: [string, string], tokens: Set<string>[], more?: (n: number) => boolean): RenewalLoad {
  const answers: Answer[] = []
  let readyAt = Number.POSITIVE_INFINITY
  const renewedSince = (n: number, since: number) => new Set(answers.filter(answer => answer.at > since && answer.session === n && answer.bearer).map(answer => answer.bearer)).size
  const answeredOnB = () => answers.some(answer => answer.session === 0 && answer.gateway === b && answer.at > readyAt)
  const loads = agents.map(async (agent, n) => {
    for (let turn = 0; ; turn++) {
      const gateway = turn % 2 || (n === 0 && !answeredOnB()) ? b : a
      const answer = await apiGet(agent, gateway)
      answers.push({ ...answer, session: n, gateway })
      if (answer.bearer) tokens[n]!.add(answer.bearer)
      if ((renewedSince(n, readyAt) >= 3 && (more?.(n) ?? true)) || Date.now() - readyAt > 25_000) return
      await sleep(100)
    }
  })
  return {
    answers,
    finish: async (at) => {
      readyAt = at
      await Promise.all(loads)
    },
    readyAt: () => readyAt,
    renewedSince,
  }
}

/**
 * The verdict: each renewal made once (one refresh grant per new token seen, at least the held one and two a session
 * after the window), no refresh token used twice, no grant refused, every session open on both instances with the
 * same token; failures only 503 token-store-down, none a second past the window, at most one per session and 100-ms
 * turn from `killedAt` to then. `before`: the provider's counters before the hold.
 */
export async function expectRenewedOnce(stack: OidcStack, agents: CookieAgent[], tokens: Set<string>[], load: RenewalLoad, killedAt: number, before: DevOidcProvider['counters']): Promise<void> {
  const [a, b] = stack.gateways.map(gateway => gateway.url) as [string, string]
  const readyAt = load.readyAt()
  // A session the gateway ended is proxied without a token (the echo backend still answers 200): a failure too.
  const failures = load.answers.filter(answer => answer.status !== 200 || !answer.bearer)
  const kind = (answer: Answer) => `${answer.status} ${answer.message ?? (answer.bearer ? '' : 'no token')}`
  /** How many answers of each kind. */
  const counted = (some: Answer[]) => Object.fromEntries([...new Set(some.map(kind))].map(k => [k, some.filter(answer => kind(answer) === k).length]))
  // No session lost: each still opens on both instances, with the same token (a renewal of its own counted too).
  const after = await Promise.all(agents.map(async agent => [await apiGet(agent, a), await apiGet(agent, b)] as const))
  for (const [n, answers] of after.entries()) answers.forEach(answer => answer.bearer && tokens[n]!.add(answer.bearer))
  // Each renewal made once: one refresh grant per new token seen (at least the held one and two a session after).
  const renewals = tokens.reduce((sum, seen) => sum + seen.size - 1, 0)
  expect(renewals).toBeGreaterThanOrEqual(1 + 2 * agents.length)
  const counters = stack.provider.counters
  expect({
    // Failures only while no primary answered (503, the token store down): none asked a second past the window.
    late: counted(failures.filter(answer => answer.at > readyAt + 1_000)),
    kinds: [...new Set(failures.map(kind))],
    refreshes: counters.refresh_token - before.refresh_token,
    reuse: counters.refresh_token_reuse - before.refresh_token_reuse,
    refused: counters.grant_error - before.grant_error,
    sessions: after.map(([onA, onB]) => [onA.status, onB.status, !!onA.bearer && onA.bearer === onB.bearer]),
  }).toEqual({
    late: {},
    kinds: failures.length ? [`503 ${STORE_DOWN}`] : [],
    refreshes: renewals,
    reuse: 0,
    refused: 0,
    sessions: agents.map(() => [200, 200, true]),
  })
  // Counted and bounded by the window: at most one failed answer per session and 100-ms turn while it lasted.
  expect(failures.length).toBeLessThanOrEqual(agents.length * Math.ceil((readyAt + 1_000 - killedAt) / 100))
}
