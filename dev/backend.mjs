// @ts-check
/**
 * Sample backend: a few /orders endpoints behind the gateway's /api/** proxy. Like every backend of the contract it
 * checks permissions itself: it reads the user's permissions from the development IAM's user-info with the Bearer
 * token, answers 401 without a valid token and 403 without the endpoint's permission.
 * `GET /orders/live` is a WebSocket (the `ws` package) that needs '/orders/search': it pushes an event for every order
 * created, updated or deleted, and a heartbeat event every `pushEveryMs` (default 15 s) so the demo always moves.
 */
import { createServer, STATUS_CODES } from 'node:http'
import { pathToFileURL } from 'node:url'
import { WebSocketServer } from 'ws'

/** Permission each endpoint needs. */
const RULES = [
  { method: 'GET', pattern: /^\/orders\/?$/, permission: '/orders/search' },
  { method: 'POST', pattern: /^\/orders\/?$/, permission: '/orders/create' },
  { method: 'GET', pattern: /^\/orders\/(\d+)$/, permission: '/orders/search' },
  { method: 'PUT', pattern: /^\/orders\/(\d+)$/, permission: '/orders/update' },
  { method: 'DELETE', pattern: /^\/orders\/(\d+)$/, permission: '/orders/delete' },
]

const SEED = [
  { customer: 'Công ty TNHH Minh Phát', total: 12_500_000, status: 'Mới' },
  { customer: 'Cửa hàng Hoa Sen', total: 3_200_000, status: 'Đang giao' },
  { customer: 'Nhà sách Trí Tuệ', total: 8_750_000, status: 'Hoàn tất' },
  { customer: 'Siêu thị An Bình', total: 21_000_000, status: 'Mới' },
  { customer: 'Quán cà phê Gió Biển', total: 1_450_000, status: 'Đã huỷ' },
]

/**
 * With `oidcUserInfoUrl` (an OpenID Provider's userinfo endpoint, `npm run demo:oidc`) the token is the provider's
 * access token and the permissions are its userinfo's `permissions` claim.
 * @param {{ port?: number, host?: string, iamUrl?: string, userInfoPath?: string, oidcUserInfoUrl?: string, pushEveryMs?: number }} options
 */
export async function startSampleBackend(options) {
  let nextId = 1001
  const orders = SEED.map(order => ({ id: nextId++, createdAt: new Date(Date.UTC(2026, 10, 1 + nextId % 20)).toISOString(), ...order }))
  /** @type {Map<string, { permissions: string[], at: number }>} */
  const cache = new Map()

  async function permissionsOf(authorization) {
    const match = /^Bearer (\S+)$/.exec(authorization ?? '')
    if (!match) return null
    const token = match[1]
    const cached = cache.get(token)
    if (cached && Date.now() - cached.at < 5000) return cached.permissions
    const permissions = options.oidcUserInfoUrl ? await providerPermissions(token) : await iamPermissions(token)
    if (!permissions) return null
    cache.set(token, { permissions, at: Date.now() })
    if (cache.size > 1000) cache.delete(cache.keys().next().value ?? '')
    return permissions
  }

  /** The contract IAM's user-info: web permissions of the token's user, or null. */
  async function iamPermissions(token) {
    const response = await fetch(options.iamUrl + (options.userInfoPath ?? '/iam/user/userInfo'), {
      method: 'POST',
      headers: { authorization: token },
      signal: AbortSignal.timeout(10_000),
    }).then(r => r.json()).catch(() => null)
    if (response?.code !== 'API000') return null
    return (response.body?.authorization ?? []).filter(p => p.type === 'web').map(p => p.uri)
  }

  /** The OpenID Provider's userinfo: its `permissions` claim, or null for a token it does not take. */
  async function providerPermissions(token) {
    const response = await fetch(/** @type {string} */ (options.oidcUserInfoUrl), {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(10_000),
    }).catch(() => null)
    if (!response?.ok) return null
    const claims = await response.json().catch(() => null)
    return Array.isArray(claims?.permissions) ? claims.permissions.filter(p => typeof p === 'string') : []
  }

  const server = createServer(async (req, res) => {
    const send = (status, value) => {
      const body = JSON.stringify(value)
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) })
      res.end(body)
    }
    const url = new URL(req.url ?? '/', 'http://backend.local')
    const rule = RULES.find(r => r.method === req.method && r.pattern.test(url.pathname))
    if (!rule) return send(404, { message: 'Không tìm thấy.' })
    const permissions = await permissionsOf(req.headers.authorization)
    if (!permissions) return send(401, { message: 'Chưa đăng nhập hoặc phiên đã hết hạn.' })
    if (!permissions.includes(rule.permission)) return send(403, { message: `Thiếu quyền ${rule.permission}.` })

    const chunks = []
    for await (const chunk of req) chunks.push(chunk)
    let body
    try {
      body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {}
    }
    catch {
      return send(400, { message: 'Dữ liệu không hợp lệ.' })
    }
    const id = Number(rule.pattern.exec(url.pathname)?.[1])
    const index = orders.findIndex(order => order.id === id)
    if (req.method === 'GET' && !id) {
      const q = (url.searchParams.get('q') ?? '').toLowerCase()
      return send(200, { items: orders.filter(order => order.customer.toLowerCase().includes(q)), total: orders.length })
    }
    if (req.method === 'POST') {
      const customer = String(body.customer ?? '').trim()
      const total = Number(body.total)
      if (!customer || !Number.isFinite(total) || total < 0) return send(400, { message: 'Cần tên khách hàng và tổng tiền hợp lệ.' })
      const order = { id: nextId++, createdAt: new Date().toISOString(), customer, total, status: 'Mới' }
      orders.unshift(order)
      push({ type: 'created', order })
      return send(201, order)
    }
    if (index === -1) return send(404, { message: 'Không tìm thấy đơn hàng.' })
    if (req.method === 'GET') return send(200, orders[index])
    if (req.method === 'PUT') {
      orders[index] = { ...orders[index], ...(typeof body.status === 'string' ? { status: body.status } : {}) }
      push({ type: 'updated', order: orders[index] })
      return send(200, orders[index])
    }
    push({ type: 'deleted', order: orders[index] })
    orders.splice(index, 1)
    res.writeHead(204)
    res.end()
  })

  // The live feed: the handshake is checked like any endpoint (401/403 as JSON), then events are pushed as JSON text.
  const live = new WebSocketServer({ noServer: true })
  /** @param {Record<string, unknown>} event */
  function push(event) {
    const text = JSON.stringify({ ...event, at: new Date().toISOString() })
    for (const client of live.clients) client.send(text)
  }
  server.on('upgrade', async (req, socket, head) => {
    const refuse = (/** @type {number} */ status, /** @type {string} */ message) => {
      const body = JSON.stringify({ message })
      socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
    }
    socket.on('error', () => socket.destroy())
    if (new URL(req.url ?? '/', 'http://backend.local').pathname !== '/orders/live') return refuse(404, 'Không tìm thấy.')
    const permissions = await permissionsOf(req.headers.authorization)
    if (!permissions) return refuse(401, 'Chưa đăng nhập hoặc phiên đã hết hạn.')
    if (!permissions.includes('/orders/search')) return refuse(403, 'Thiếu quyền /orders/search.')
    live.handleUpgrade(req, socket, head, (ws) => {
      ws.send(JSON.stringify({ type: 'hello', orders: orders.length, at: new Date().toISOString() }))
    })
  })
  const heartbeat = setInterval(() => {
    const order = orders[Math.floor(Math.random() * orders.length)]
    if (order) push({ type: 'viewed', order })
  }, options.pushEveryMs ?? 15_000)
  heartbeat.unref()

  await new Promise(resolve => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve(undefined)))
  const address = /** @type {import('node:net').AddressInfo} */ (server.address())
  return {
    url: `http://${address.address}:${address.port}`,
    port: address.port,
    close: () => {
      clearInterval(heartbeat)
      for (const client of live.clients) client.terminate()
      const closed = new Promise(resolve => server.close(() => resolve(undefined)))
      server.closeAllConnections()
      return closed
    },
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const backend = await startSampleBackend({ port: Number(process.env.PORT ?? 4020), iamUrl: process.env.IAM_URL ?? 'http://127.0.0.1:4010' })
  console.log(`[sample-backend] listening on ${backend.url}`)
}
