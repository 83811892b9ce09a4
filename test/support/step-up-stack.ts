import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { gatewayClient, startDevOidcProvider } from '../../dev/oidc-provider.mjs'
import { startEchoBackend } from './echo-backend'
import { freePort, SERVER_ENTRY, startGateway, type RunningGateway } from './gateway'
import { oidcEnv, providerKnown, type DevOidcProvider } from './oidc'

export interface StepUpStack {
  provider: DevOidcProvider
  echo: Awaited<ReturnType<typeof startEchoBackend>>
  gateway: RunningGateway
}

/** The 401 the gateway answers a script whose session needs a step-up. */
export const STEP_UP = { statusCode: 401, statusMessage: 'Thao tác này cần xác thực mạnh hơn: hãy xác thực lại tại nhà cung cấp định danh.' }

/**
 * For the step-up tests: the development provider (acr `mfa` for a login with the one-time code), the echo backend
 * behind `/api/reports` (a route needing acr `mfa`), a backend behind `/api/strict` (token `optional`) that answers
 * `/challenge…` with an RFC 9470 challenge (acr_values mfa, max_age 300) and anything else with 200 `{"ok":true}`,
 * and a gateway with APP_AUTH_KIND=oidc and that routes file.
 */
export function useStepUpStack(): StepUpStack {
  const stack = {} as StepUpStack
  let challenger: Server
  let folder: string
  beforeAll(async () => {
    const port = await freePort()
    stack.echo = await startEchoBackend()
    challenger = createServer((req, res) => {
      if (req.url?.startsWith('/challenge')) {
        res.writeHead(401, { 'www-authenticate': 'Bearer error="insufficient_user_authentication", error_description="A different authentication level is required", acr_values="mfa", max_age="300"', 'content-type': 'text/plain' })
        res.end('the backend\'s own words')
        return
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{"ok":true}')
    })
    await new Promise<void>(resolve => challenger.listen(0, '127.0.0.1', resolve))
    folder = mkdtempSync(join(tmpdir(), 'svc-step-up-'))
    const routes = join(folder, 'routes.json')
    writeFileSync(routes, JSON.stringify({
      routes: [
        { name: 'reports', prefix: '/api/reports', target: stack.echo.url, acr: 'mfa' },
        { name: 'strict', prefix: '/api/strict', token: 'optional', target: `http://127.0.0.1:${(challenger.address() as AddressInfo).port}` },
      ],
    }))
    stack.provider = await startDevOidcProvider({ clients: [gatewayClient({ origin: `http://127.0.0.1:${port}`, clientSecret: 'gateway-secret' })] })
    stack.gateway = await startGateway(oidcEnv({ provider: stack.provider, echo: stack.echo }, { APP_API_ROUTES_FILE: routes }), SERVER_ENTRY, port)
    await providerKnown(stack.gateway)
  }, 60_000)
  afterAll(async () => {
    await stack.gateway?.stop()
    await Promise.all([stack.provider?.close(), stack.echo?.close(), new Promise(resolve => challenger ? challenger.close(resolve) : resolve(undefined))])
    if (folder) rmSync(folder, { recursive: true, force: true })
  })
  return stack
}
