// @ts-check
/**
 * An OpenID session (issue 27: "the proxy's rate within 5% of the contract IAM's"): the bare gateway proxying /api/**
 * with a contract-IAM session against the same build with APP_AUTH_KIND=oidc proxying with a session made through the
 * development provider (dev/oidc-provider.mjs, in this process; access tokens of an hour, so the steady state is
 * measured: a map lookup for the token, no Redis, no provider call). Standalone interleaved rounds, then head to head.
 */
import { cookieAgent, logInWithProvider } from '../../dev/oidc-browser.mjs'
import { gatewayClient, startDevOidcProvider } from '../../dev/oidc-provider.mjs'
import { comparePaths } from '../load.mjs'
import { freePort } from '../processes.mjs'
import { GATEWAY, log } from '../setup.mjs'
import { pathRow } from '../table.mjs'

const IAM = 'gateway /api/** bare, contract-IAM session'
const OIDC = 'gateway /api/** bare, OpenID session'

/** Logs in on the OIDC gateway through the provider's form (by fetch); the gateway's Cookie header. */
async function oidcCookie(gateway, provider) {
  const agent = cookieAgent()
  await logInWithProvider(agent, gateway, provider)
  if (!agent.jar.has('svc_session')) throw new Error('the OIDC login did not end with a session')
  return `svc_session=${agent.jar.get('svc_session')}`
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
    /** @type {[import('../load.mjs').Target, import('../load.mjs').Target]} */
    const targets = [[IAM, `${bare.url}/api/ping`, { cookie }], [OIDC, `${oidc.url}/api/ping`, { cookie: oidcSession }]]
    const { runs: [iam, openid], figure, ratio } = await comparePaths(targets, log)
    return {
      paths: [pathRow(IAM, iam), pathRow(OIDC, openid)],
      checks: [{ what: 'proxy with an OpenID session vs a contract-IAM session', figure, target: '≥ 0.95×', ok: ratio >= 0.95 }],
    }
  }
  finally {
    await provider.close()
  }
}
