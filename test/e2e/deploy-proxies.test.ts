import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningGateway } from '../support/gateway'
import { startCaddy, startNginx, type FrontProxy, type NginxFile } from '../support/front-proxy'
import { fillAccounts, fullestLogin, postLogin } from '../support/login'
import { useStack } from '../support/stack'

// Every proxy file of deploy/, run by Debian's nginx and Caddy in front of the built gateway: each must carry the
// largest answer the gateway gives, a login whose svc_session Set-Cookie fills the 4 KB budget, with svc_device beside it.
const stack = useStack({ iam: { accounts: fillAccounts() }, gateway: { APP_TRUST_PROXY: 'loopback' } })
const NGINX_FILES: NginxFile[] = ['nginx-forward-auth.conf', 'nginx.conf', 'nginx.compose.conf']
const proxies: FrontProxy[] = []
let fullest: Awaited<ReturnType<typeof fullestLogin>>

beforeAll(async () => {
  const addresses = { gateway: new URL(stack.gateway.url).host, service: new URL(stack.echo.url).host }
  // Each kept as soon as it is up, so that afterAll stops those that started when another did not.
  const started = await Promise.allSettled([
    ...NGINX_FILES.map(file => startNginx(addresses, file).then(proxy => proxies.push(proxy))),
    startCaddy(addresses).then(proxy => proxies.push(proxy)),
  ])
  for (const result of started) if (result.status === 'rejected') throw result.reason
  fullest = await fullestLogin(stack.gateway)
})
afterAll(async () => {
  await Promise.all(proxies.map(proxy => proxy.stop()))
})

describe.each([...NGINX_FILES, 'Caddyfile.forward-auth'])('deploy/%s', (file) => {
  it('passes a login whose session cookie fills the 4 KB budget, with svc_device, whole', async () => {
    // The budget counts the whole `Set-Cookie: ` line: this one is within a few bytes of it.
    expect(Buffer.byteLength(`Set-Cookie: ${fullest.setCookie}`)).toBeGreaterThan(4096 - 8)
    const proxy = proxies.find(proxy => proxy.file === file)!
    const answer = await postLogin({ url: proxy.url } as RunningGateway, { username: fullest.username, password: fullest.password })
    expect(answer.status, proxy.output()).toBe(200)
    const lines = answer.headers['set-cookie'] as string[]
    const session = lines.find(line => line.startsWith('svc_session='))!
    // The same size as the gateway's own (a fresh seal, a fresh Expires: the same length).
    expect(Buffer.byteLength(session)).toBe(Buffer.byteLength(fullest.setCookie))
    expect(lines).toContainEqual(expect.stringMatching(/^svc_device=/))
    expect(JSON.parse(answer.body).user.id).toBe(`u-${fullest.username}`)
  })
})
