// @ts-check
/**
 * Development IAM: a real HTTP server speaking the contract's IAM envelope { code, message, body } and its default
 * response shape on the four endpoints, plus POST /auth/auth/logout (ends the token) for APP_AUTH_ENDPOINTS_LOGOUT. Used by `npm run demo` and by the integration and browser tests.
 *
 * Accounts: see USERS below. Failure scenarios: per username on login (slow, html-error, http-503, no-token,
 * short-lived, huge-token) or for every call with `iam.scenario` / POST /__dev/scenario?name=...
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import { pathToFileURL } from 'node:url'

export const MESSENGER_OTP = '246810'
export const AUTHENTICATOR_OTP = '135790'

const web = (...uris) => uris.map(uri => ({ uri, type: 'web' }))
const job = (...uris) => uris.map(uri => ({ uri, type: 'job' }))

/** @type {Record<string, { password: string, fullName: string, email: string, roles: Array<{code: string, name: string}>, authorization: Array<{uri: string, type: string}>, otp?: 'MESSENGER' | 'AUTHENTICATOR', expiresIn?: number, tokenBytes?: number }>} */
export const USERS = {
  'admin': {
    password: 'admin123',
    fullName: 'Trần Quản Trị',
    email: 'admin@example.vn',
    roles: [{ code: 'admin', name: 'Quản trị' }],
    authorization: [...web('/orders/search', '/orders/create', '/orders/update', '/orders/delete'), ...job('/jobs/sync')],
  },
  'sale': {
    password: 'sale123',
    fullName: 'Lê Bán Hàng',
    email: 'sale@example.vn',
    roles: [{ code: 'sale', name: 'Bán hàng' }],
    authorization: [...web('/orders/search', '/orders/create'), ...job('/jobs/report')],
  },
  'viewer': {
    password: 'viewer123',
    fullName: 'Phạm Chỉ Xem',
    email: 'viewer@example.vn',
    roles: [{ code: 'viewer', name: 'Chỉ xem' }],
    authorization: web('/orders/search'),
  },
  'ops': {
    password: 'ops123',
    fullName: 'Đỗ Vận Hành',
    email: 'ops@example.vn',
    roles: [{ code: 'ops', name: 'Vận hành' }, { code: 'viewer', name: 'Chỉ xem' }],
    authorization: web('/orders/search', '/grafana/view'),
  },
  'otp.sms': {
    password: 'otp123',
    fullName: 'Ngô Nhận Tin',
    email: 'otp.sms@example.vn',
    roles: [{ code: 'sale', name: 'Bán hàng' }],
    authorization: web('/orders/search', '/orders/create'),
    otp: 'MESSENGER',
  },
  'otp.app': {
    password: 'otp123',
    fullName: 'Đỗ Xác Thực',
    email: 'otp.app@example.vn',
    roles: [{ code: 'sale', name: 'Bán hàng' }],
    authorization: web('/orders/search'),
    otp: 'AUTHENTICATOR',
  },
  'power': {
    password: 'power123',
    fullName: 'Vũ Nhiều Quyền',
    email: 'power@example.vn',
    roles: Array.from({ length: 12 }, (_, i) => ({ code: `role-${i + 1}`, name: `Vai trò ${i + 1}` })),
    authorization: [
      ...web('/orders/search', '/orders/create', '/orders/update'),
      ...web(...Array.from({ length: 120 }, (_, i) => `/module-${Math.floor(i / 4) + 1}/action-${(i % 4) + 1}`)),
      ...job('/jobs/sync'),
    ],
  },
  'huge-token': {
    password: 'huge123',
    fullName: 'Token Quá Lớn',
    email: 'huge@example.vn',
    roles: [{ code: 'viewer', name: 'Chỉ xem' }],
    authorization: web('/orders/search'),
    tokenBytes: 2600,
  },
  'short-lived': {
    password: 'short123',
    fullName: 'Hết Hạn Nhanh',
    email: 'short@example.vn',
    roles: [{ code: 'viewer', name: 'Chỉ xem' }],
    authorization: web('/orders/search'),
    expiresIn: 2,
  },
}

export const CLIENTS = [
  { id: 1, code: 'ORDERS_WEB', name: 'Quản lý đơn hàng', status: 1 },
  { id: 2, code: 'CRM_WEB', name: 'Chăm sóc khách hàng', status: 1 },
  { id: 3, code: 'NO_NAME' },
  { code: 'NO_ID', name: 'Thiếu id' },
  { id: 5, name: 'Thiếu code' },
]
const CLIENT_CODES = new Set(CLIENTS.map(client => client.code).filter(Boolean))

const ok = body => ({ code: 'API000', message: 'Thành công', body })
const refuse = (code, message) => ({ code, message, body: null })

/**
 * @typedef {{ method: string, path: string, query: Record<string, string>, headers: import('node:http').IncomingHttpHeaders, body: any }} RecordedRequest
 * @typedef {'normal' | 'slow' | 'html' | 'refuse-user-info' | 'refuse-clients' | 'down'} Scenario
 */

/**
 * Starts the development IAM on 127.0.0.1.
 * `accounts`: more accounts beside USERS (the soak logs in as many users, so none has hundreds of logouts).
 * @param {{ port?: number, host?: string, slowMs?: number, log?: boolean, accounts?: typeof USERS }} [options]
 */
export async function startDevIam(options = {}) {
  const slowMs = options.slowMs ?? 11_000
  const accounts = { ...USERS, ...options.accounts }
  /** @type {Map<string, { username: string, expiresAt: number }>} */
  const tokens = new Map()
  /** @type {Map<string, { username: string, code: string }>} */
  const transactions = new Map()
  /** @type {RecordedRequest[]} */
  const requests = []
  const state = {
    /** @type {Scenario} */
    scenario: 'normal',
  }

  function issueToken(username, expiresIn, bytes = 1790) {
    // About 2.4 KB by default, the size of the real IAM's tokens.
    const token = `dev.${randomBytes(bytes).toString('base64url')}`
    tokens.set(token, { username, expiresAt: Date.now() + expiresIn * 1000 })
    return token
  }

  function profile(username) {
    const user = accounts[username]
    return { userId: `u-${username}`, username, fullName: user.fullName, email: user.email, listRole: user.roles, authorization: user.authorization }
  }

  function login(body) {
    const username = typeof body?.username === 'string' ? body.username : ''
    const user = accounts[username]
    if (username === 'no-token') return ok({ ...profile('viewer'), tokenData: {} })
    if (!user || user.password !== body.password) return refuse('AUTH001', 'Tên đăng nhập hoặc mật khẩu không đúng.')
    if (body.clientId && !CLIENT_CODES.has(body.clientId)) return refuse('AUTH003', 'Mã ứng dụng không hợp lệ.')
    if (user.otp) {
      if (!body.otp) return refuse('OTP001', user.otp === 'MESSENGER' ? 'Vui lòng gửi và nhập mã OTP qua tin nhắn.' : 'Vui lòng nhập mã OTP từ ứng dụng xác thực.')
      if (body.authenMethod !== user.otp) return refuse('OTP002', 'Phương thức OTP không đúng.')
      if (user.otp === 'MESSENGER') {
        const sent = transactions.get(body.transactionId)
        if (!sent || sent.username !== username) return refuse('OTP003', 'Giao dịch OTP không hợp lệ hoặc đã hết hạn.')
        if (sent.code !== body.otp) return refuse('OTP004', 'Mã OTP không đúng.')
        transactions.delete(body.transactionId)
      }
      else if (body.otp !== AUTHENTICATOR_OTP) return refuse('OTP004', 'Mã OTP không đúng.')
    }
    const expiresIn = user.expiresIn ?? 3600
    return ok({ ...profile(username), tokenData: { access_token: issueToken(username, expiresIn, user.tokenBytes), token_type: 'bearer', expires_in: expiresIn } })
  }

  function userInfo(authorization) {
    if (state.scenario === 'refuse-user-info') return refuse('AUTH401', 'Token không hợp lệ.')
    const entry = typeof authorization === 'string' ? tokens.get(authorization) : undefined
    if (!entry) return refuse('AUTH401', 'Token không hợp lệ.')
    if (entry.expiresAt <= Date.now()) return refuse('AUTH402', 'Token đã hết hạn.')
    return ok(profile(entry.username))
  }

  function otpSend(body) {
    const user = accounts[body?.username]
    if (!user || user.password !== body.password) return refuse('AUTH001', 'Tên đăng nhập hoặc mật khẩu không đúng.')
    if (user.otp !== 'MESSENGER') return refuse('OTP010', 'Tài khoản không dùng OTP qua tin nhắn.')
    const transactionId = `tx-${randomUUID()}`
    transactions.set(transactionId, { username: body.username, code: MESSENGER_OTP })
    if (options.log) console.log(`[dev-iam] OTP ${MESSENGER_OTP} gửi tới ${body.username} (${transactionId})`)
    return ok({ transactionId })
  }

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://iam.local')
    const chunks = []
    for await (const chunk of req) chunks.push(chunk)
    const text = Buffer.concat(chunks).toString('utf8')
    let body
    try {
      body = text ? JSON.parse(text) : undefined
    }
    catch {
      body = text
    }
    requests.push({ method: req.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers, body })
    if (requests.length > 500) requests.shift()

    const send = (status, value, type = 'application/json; charset=utf-8') => {
      const payload = typeof value === 'string' ? value : JSON.stringify(value)
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(payload) })
      res.end(payload)
    }
    if (url.pathname === '/__dev/scenario' && req.method === 'POST') {
      state.scenario = /** @type {Scenario} */ (url.searchParams.get('name') ?? 'normal')
      return send(200, { scenario: state.scenario })
    }
    if (state.scenario === 'down') return req.socket.destroy()
    const username = body?.username
    if (state.scenario === 'slow' || username === 'slow') await new Promise(resolve => setTimeout(resolve, slowMs))
    if (state.scenario === 'html' || username === 'html-error') {
      return send(500, '<!doctype html><title>500</title><h1>Internal Server Error</h1>', 'text/html')
    }
    if (username === 'http-503') return send(503, 'Service Unavailable', 'text/plain')

    if (req.method === 'POST' && url.pathname === '/auth/auth/login-v1') return send(200, login(body))
    if (req.method === 'POST' && url.pathname === '/iam/user/userInfo') return send(200, userInfo(req.headers.authorization))
    if (req.method === 'POST' && url.pathname === '/auth/auth/login/request') return send(200, otpSend(body))
    if (req.method === 'POST' && url.pathname === '/auth/auth/logout') {
      const known = typeof req.headers.authorization === 'string' && tokens.delete(req.headers.authorization)
      return send(200, known ? ok(null) : refuse('AUTH401', 'Token không hợp lệ.'))
    }
    if (req.method === 'GET' && url.pathname === '/iam/client/findAll') {
      if (state.scenario === 'refuse-clients') return send(200, refuse('SYS500', 'Không đọc được danh sách ứng dụng.'))
      const status = url.searchParams.get('status')
      return send(200, ok(CLIENTS.filter(client => status === null || String(client.status ?? 1) === status)))
    }
    send(404, refuse('NOT_FOUND', 'Không có endpoint này.'))
  })
  server.keepAliveTimeout = 60_000

  await new Promise(resolve => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve(undefined)))
  const address = /** @type {import('node:net').AddressInfo} */ (server.address())
  return {
    url: `http://${address.address}:${address.port}`,
    port: address.port,
    requests,
    state,
    /** Revokes every token issued so far (the IAM refuses them from now on). */
    revokeAll: () => tokens.clear(),
    /** Makes every token expire now. */
    expireAll: () => {
      for (const entry of tokens.values()) entry.expiresAt = 0
    },
    close: () => {
      const closed = new Promise(resolve => server.close(() => resolve(undefined)))
      server.closeAllConnections()
      return closed
    },
    server,
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const iam = await startDevIam({ port: Number(process.env.PORT ?? 4010), log: true })
  console.log(`[dev-iam] listening on ${iam.url}`)
}
