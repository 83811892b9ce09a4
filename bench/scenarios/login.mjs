// @ts-check
/**
 * Login: the gateway's own cost on top of the two IAM calls it makes (login, then user info), keep-alive on both sides:
 * the median of 150 logins through the bare gateway against the median of 150 pairs of the same calls made directly.
 */
import { Agent, request } from 'undici'
import { median } from '../load.mjs'

/** The median time of `n` sequential calls of `fn`, in ms. */
async function medianMs(fn, n = 150) {
  const samples = []
  for (let i = 0; i < n; i++) {
    const start = performance.now()
    await fn()
    samples.push(performance.now() - start)
  }
  return median(samples)
}

/** @param {import('../setup.mjs').Bench} bench */
export async function run(bench) {
  const gateway = await bench.bareGateway()
  const iam = await bench.iam()
  const agent = new Agent({ keepAliveTimeout: 30_000 })
  const body = JSON.stringify({ username: 'admin', password: 'admin123' })
  const json = { 'content-type': 'application/json' }
  const direct = await medianMs(async () => {
    const login = /** @type {any} */ (await (await request(`${iam.url}/auth/auth/login-v1`, { method: 'POST', body, headers: json, dispatcher: agent })).body.json())
    await (await request(`${iam.url}/iam/user/userInfo`, { method: 'POST', headers: { authorization: login.body.tokenData.access_token }, dispatcher: agent })).body.json()
  })
  const viaGateway = await medianMs(async () => {
    await (await request(`${gateway.url}/auth/login`, { method: 'POST', body, headers: json, dispatcher: agent })).body.json()
  })
  await agent.close()
  return {
    checks: [{ what: 'login: gateway p50 − direct IAM calls p50', figure: `${(viaGateway - direct).toFixed(2)} ms (${viaGateway.toFixed(2)} vs ${direct.toFixed(2)})`, target: '≤ 2 ms', ok: viaGateway - direct <= 2 }],
  }
}
