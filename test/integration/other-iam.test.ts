import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cookiePair, findSetCookie, type RunningGateway } from '../support/gateway'
import { useStack } from '../support/stack'

/**
 * An IAM of another shape: other endpoint paths, no { code, message, body } envelope (failures are HTTP statuses),
 * other field paths, permissions without a type, other OTP method codes. The gateway is pointed at it by APP_AUTH_*
 * variables only: nothing of the default IAM is assumed.
 */
interface Received {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: Record<string, unknown> | undefined
}

const TOKEN = 'other-iam-token-0123456789'
let received: Received[] = []
let iamUrl = ''
let close: () => Promise<void>
let gateway: RunningGateway
const stack = useStack({ iam: false, backend: 'none' })

beforeAll(async () => {
  const server = createServer((req, res) => {
    let text = ''
    req.on('data', (chunk) => {
      text += chunk
    })
    req.on('end', () => {
      const body = text ? JSON.parse(text) as Record<string, unknown> : undefined
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body })
      const send = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(JSON.stringify(value))
      }
      if (req.method === 'POST' && req.url === '/v2/signin') {
        if (body?.password !== 'secret' || (body.otp !== undefined && (body.otp !== '111222' || body.authenMethod !== 'TOTP'))) return send(401, { error: 'denied' })
        return send(200, { data: { session: { token: TOKEN, ttl: 600 }, profile: { uid: 'x-1' } } })
      }
      if (req.method === 'POST' && req.url === '/v2/me') {
        if (req.headers.authorization !== TOKEN) return send(401, { error: 'bad token' })
        return send(200, { data: { uid: 'x-1', displayName: 'Hoàng Khác', mail: 'khac@other.vn', groups: ['editor'], grants: [{ path: '/orders/search', kind: 'web' }, { path: '/orders/create', kind: 'api' }] } })
      }
      if (req.method === 'GET' && req.url === '/v2/apps?status=active') return send(200, { data: { apps: [{ key: 7, slug: 'APP_A', title: 'Ứng dụng A' }, { key: 8, slug: 'APP_B' }] } })
      if (req.method === 'POST' && req.url === '/v2/otp') return send(200, { data: { tx: 'tx-9' } })
      send(404, { error: 'no such endpoint' })
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  iamUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  close = () => new Promise(resolve => server.close(() => resolve()))
  gateway = await stack.bareGateway({
    APP_AUTH_BASE_URL: iamUrl,
    APP_AUTH_ENDPOINTS_LOGIN: '/v2/signin',
    APP_AUTH_ENDPOINTS_USER_INFO: '/v2/me',
    APP_AUTH_ENDPOINTS_CLIENTS: '/v2/apps?status=active',
    APP_AUTH_ENDPOINTS_OTP_SEND: '/v2/otp',
    APP_AUTH_MAPPING_TOKEN: 'data.session.token',
    APP_AUTH_MAPPING_EXPIRES_IN: 'data.session.ttl',
    APP_AUTH_MAPPING_ID: 'data.uid',
    APP_AUTH_MAPPING_NAME: 'data.displayName',
    APP_AUTH_MAPPING_EMAIL: 'data.mail',
    APP_AUTH_MAPPING_ROLES: 'data.groups',
    APP_AUTH_MAPPING_PERMISSIONS: 'data.grants',
    APP_AUTH_MAPPING_PERMISSION_KEY: 'path',
    APP_AUTH_MAPPING_PERMISSION_TYPE: '',
    APP_AUTH_MAPPING_CLIENTS: 'data.apps',
    APP_AUTH_MAPPING_CLIENT_ID: 'key',
    APP_AUTH_MAPPING_CLIENT_CODE: 'slug',
    APP_AUTH_MAPPING_CLIENT_NAME: 'title',
    APP_AUTH_MAPPING_TRANSACTION_ID: 'data.tx',
    APP_AUTH_AUTHEN_METHOD_AUTHENTICATOR: 'TOTP',
    APP_AUTH_AUTHEN_METHOD_MESSENGER: 'SMS',
  })
})
afterAll(async () => {
  await gateway?.stop()
  await close?.()
})

const post = (path: string, body: unknown) => fetch(gateway.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

describe('a differently shaped IAM, driven only by APP_AUTH_* variables', () => {
  it('logs in with the other paths, fields and OTP code, and maps the user (type filter off)', async () => {
    received = []
    const before = Date.now()
    const login = await post('/auth/login', { username: 'khac', password: 'secret', method: 'authenticator', otp: '111222' })
    expect(login.status).toBe(200)
    const user = { id: 'x-1', name: 'Hoàng Khác', email: 'khac@other.vn', roles: ['editor'], permissions: ['/orders/search', '/orders/create'] }
    expect(await login.json()).toEqual({ user })
    expect(received.map(call => `${call.method} ${call.url}`)).toEqual(['POST /v2/signin', 'POST /v2/me'])
    expect(received[0]!.body).toMatchObject({ username: 'khac', password: 'secret', otp: '111222', authenMethod: 'TOTP' })
    expect(received[1]!.headers.authorization).toBe(TOKEN)

    const cookie = cookiePair(findSetCookie(login, 'svc_session')!)
    const session = await (await fetch(`${gateway.url}/auth/session`, { headers: { cookie } })).json()
    expect(session.user).toEqual(user)
    expect(session.expiresAt).toBeGreaterThanOrEqual(before + 600_000)
    expect(session.expiresAt).toBeLessThanOrEqual(Date.now() + 600_000)
  })

  it('answers an HTTP refusal without an envelope with its status', async () => {
    const refused = await post('/auth/login', { username: 'khac', password: 'wrong' })
    expect(refused.status).toBe(401)
    expect(await refused.json()).toMatchObject({ statusCode: 401, statusMessage: 'IAM trả lỗi HTTP 401.' })
  })

  it('reads the applications and the OTP transaction at their own paths', async () => {
    received = []
    expect(await (await fetch(`${gateway.url}/auth/clients`)).json()).toEqual({ clients: [{ id: '7', code: 'APP_A', name: 'Ứng dụng A' }] })
    expect(received.map(call => `${call.method} ${call.url}`)).toEqual(['GET /v2/apps?status=active'])
    const otp = await post('/auth/otp/send', { username: 'khac', password: 'secret' })
    expect(await otp.json()).toEqual({ transactionId: 'tx-9' })
    expect(received.at(-1)!.body).toMatchObject({ username: 'khac', authenMethod: 'SMS' })
  })
})
