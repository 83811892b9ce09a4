// @ts-check
/**
 * An OpenID session (issue 27: "the proxy's rate within 5% of the contract IAM's"): the bare gateway proxying /api/**
 * with a contract-IAM session against the same build with APP_AUTH_KIND=oidc proxying with a session made through the
 * development provider (dev/oidc-provider.mjs, in this process; access tokens of an hour, so the steady state is
 * measured: a map lookup for the token, no Redis, no provider call). Standalone interleaved rounds, then head to head.
 */
import { gatewayClient, startDevOidcProvider } from '../../dev/oidc-provider.mjs'
import { headToHead, interleavedRounds, median, spread } from '../load.mjs'
import { freePort } from '../processes.mjs'
import { GATEWAY, log } from '../setup.mjs'
import { pathRow } from '../table.mjs'

const IAM = 'gateway /api/** bare, contract-IAM session'
const OIDC = 'gateway /api/** bare, OpenID session'

/** Logs in through the provider's form by fetch (cookies carried by hand); the gateway's Cookie header. */
async function oidcCookie(gateway, provider) {
  const jar = new Map()
  const go = async (url, init = {}) => {
    const headers = new Headers(init.headers)
    if (jar.size) headers.set('cookie', [...jar].map(([name, value]) => `${name}=${value}`).join('; '))
    const response = await fetch(url, { ...init, headers, redirect: 'manual' })
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(';')[0]
      jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1))
    }
    return response
  }
  let url = new URL(`${gateway}/auth/sso`)
  let response = await go(url)
  for (let hop = 0; hop < 20 && !jar.has('svc_session'); hop++) {
    if (response.status >= 300 && response.status < 400) url = new URL(response.headers.get('location') ?? '/', url)
    else {
      const action = /<form method="post" action="([^"]+)"/.exec(await response.text())?.[1]
      if (!action) throw new Error(`no login form at ${url}`)
      url = new URL(action, provider)
      response = await go(url, { method: 'POST', body: new URLSearchParams({ username: 'admin', password: 'admin123' }) })
      continue
    }
    response = await go(url)
  }
  if (!jar.has('svc_session')) throw new Error('the OIDC login did not end with a session')
  return `svc_session=${jar.get('svc_session')}`
}

/** @param {import('../setup.mjs').Bench} bench */
export async function run(bench) {
  const bare = await bench.bareGateway()
  const cookie = await bench.cookie()
  await bench.build()
  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`
  const provider = await startDevOidcProvider({ accessTokenTtl: 3600, clients: [gatewayClient({ origin, clientSecret: 'gateway-secret' })] })
  try {
    const env = {
      HOST: '127.0.0.1', PORT: String(port), APP_SESSION_SECRET: bench.secret, APP_ACCESS_LOG: 'false',
      APP_API_PROXY_TARGET: await bench.tinyBackend(), APP_AUTH_KIND: 'oidc', APP_OIDC_ISSUER: provider.url,
      APP_OIDC_CLIENT_ID: 'gateway', APP_OIDC_CLIENT_SECRET: 'gateway-secret', APP_AUTH_MAPPING_ROLES: 'realm_access.roles',
    }
    const oidc = await bench.start(OIDC, process.execPath, [GATEWAY], port, { env, logName: 'oidc-gateway' })
    const oidcSession = await oidcCookie(oidc.url, provider.url)
    /** @type {import('../load.mjs').Target[]} */
    const targets = [[IAM, `${bare.url}/api/ping`, { cookie }], [OIDC, `${oidc.url}/api/ping`, { cookie: oidcSession }]]
    const runs = await interleavedRounds(targets, log)
    const duel = await headToHead(targets[0], targets[1])
    const [iam, openid] = targets.map(([name]) => runs.get(name) ?? [])
    const standalone = openid.map((result, i) => result.rps / iam[i].rps)
    return {
      paths: [pathRow(IAM, iam), pathRow(OIDC, openid)],
      checks: [{ what: 'proxy with an OpenID session vs a contract-IAM session', figure: `head to head ${spread(duel.ratios)}; standalone rounds ${spread(standalone)}`, target: '≥ 0.95×', ok: median(duel.ratios) >= 0.95 }],
    }
  }
  finally {
    await provider.close()
  }
}
