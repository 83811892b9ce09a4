import { readFileSync } from 'node:fs'
import { describe, expect, it, vi } from 'vitest'
import { envName, overlayEnv, toBool, toInt, toList } from '../../server/core/config/coerce'
import { EXAMPLE_SECRETS, parseGatewayConfig, readSecrets, toProxyTrust } from '../../server/core/config/config'
import { ConfigError, type RawGatewayConfig } from '../../server/core/config/types'
import { GATEWAY_DEFAULTS } from '../../server/core/config/defaults'
import { iamTimeoutMessage } from '../../server/http/errors'

const SECRET = 'x'.repeat(32)

describe('toBool (APP_AUTH_MOCK)', () => {
  it.each([
    [true, true], [false, false], [1, true], [0, false], ['true', true], ['false', false], ['1', true], ['0', false],
    ['TRUE', true], [' yes ', true], ['off', false], ['', false], [undefined, false], [null, false],
  ])('%j -> %j', (input, expected) => {
    expect(toBool(input, 'APP_AUTH_MOCK')).toBe(expected)
  })
  it('refuses anything else, naming the variable', () => {
    expect(() => toBool('maybe', 'APP_AUTH_MOCK')).toThrow(/APP_AUTH_MOCK/)
    expect(() => toBool(2, 'APP_AUTH_MOCK')).toThrow(ConfigError)
  })
})

describe('numbers, lists and proxy counts', () => {
  it('parses whole numbers and keeps the default for empty', () => {
    expect(toInt('', 5, 'V')).toBe(5)
    expect(toInt(7, 5, 'V')).toBe(7)
    expect(toInt('8', 5, 'V')).toBe(8)
    expect(() => toInt('abc', 5, 'APP_RATE_LIMIT_PER_USER')).toThrow(/APP_RATE_LIMIT_PER_USER/)
    expect(() => toInt(-1, 5, 'V')).toThrow(ConfigError)
    expect(() => toInt(1.5, 5, 'V')).toThrow(ConfigError)
  })
  it('splits comma lists', () => {
    expect(toList('a, b,,c ')).toEqual(['a', 'b', 'c'])
    expect(toList('')).toEqual([])
    expect(toList(['x', 'y'])).toEqual(['x', 'y'])
  })
  it('reads APP_TRUST_PROXY as a count or a list of proxy addresses and networks', () => {
    expect(toProxyTrust(false)).toBe(0)
    expect(toProxyTrust(true)).toBe(1)
    expect(toProxyTrust('true')).toBe(1)
    expect(toProxyTrust('FALSE')).toBe(0)
    expect(toProxyTrust(2)).toBe(2)
    expect(toProxyTrust('2')).toBe(2)
    expect(toProxyTrust('')).toBe(0)
    expect(toProxyTrust('10.0.0.0/8, loopback,2001:db8::/32 ,192.0.2.7')).toEqual(['10.0.0.0/8', 'loopback', '2001:db8::/32', '192.0.2.7'])
    expect(toProxyTrust(['uniquelocal'])).toEqual(['uniquelocal'])
    expect(() => toProxyTrust('many')).toThrow(/^APP_TRUST_PROXY .*invalid IP address: many.*'many'/)
    expect(() => toProxyTrust('-1')).toThrow(/APP_TRUST_PROXY/)
    expect(() => toProxyTrust('10.0.0.0/33')).toThrow(/APP_TRUST_PROXY .*invalid range on address: 10.0.0.0\/33/)
    expect(() => toProxyTrust('1.5')).toThrow(/APP_TRUST_PROXY/)
  })
})

describe('readSecrets', () => {
  it('requires APP_SESSION_SECRET of at least 32 characters', () => {
    expect(() => readSecrets(undefined, '')).toThrow(/APP_SESSION_SECRET/)
    expect(() => readSecrets('short', '')).toThrow(/APP_SESSION_SECRET.*32/)
    expect(readSecrets(SECRET, '')).toEqual([SECRET])
  })
  it('refuses 31 characters and takes 32: the edge is 32', () => {
    expect(() => readSecrets('s'.repeat(31), '')).toThrow('APP_SESSION_SECRET quá ngắn: cần ít nhất 32 ký tự.')
    expect(readSecrets('s'.repeat(32), '')).toEqual(['s'.repeat(32)])
  })
  it('adds the previous secrets after the current one', () => {
    const old = 'o'.repeat(40)
    expect(readSecrets(SECRET, `${old}, ${SECRET}`)).toEqual([SECRET, old])
  })
  it('refuses a documented example secret, current or previous, naming the variable', () => {
    for (const example of EXAMPLE_SECRETS) {
      expect(() => readSecrets(example, '')).toThrow('APP_SESSION_SECRET là giá trị mẫu của tài liệu, ai cũng biết: tạo khoá riêng (openssl rand -hex 32).')
      expect(() => readSecrets(SECRET, `${'o'.repeat(40)},${example}`)).toThrow('APP_SESSION_SECRET_PREVIOUS là giá trị mẫu của tài liệu, ai cũng biết: tạo khoá riêng (openssl rand -hex 32).')
    }
  })
})

describe('parseGatewayConfig', () => {
  it('gives the contract defaults', () => {
    const config = parseGatewayConfig({}, [SECRET])
    expect(config.mock).toBe(false)
    expect(config.baseURL).toBe('')
    expect(config.endpoints).toEqual({
      login: '/auth/auth/login-v1',
      userInfo: '/iam/user/userInfo',
      clients: '/iam/client/findAll?status=1',
      otpSend: '/auth/auth/login/request',
      logout: '',
    })
    expect(config.mapping.token).toBe('body.tokenData.access_token')
    expect(config.mapping.permissionType).toBe('web')
    expect(config.authenMethod).toEqual({ authenticator: 'AUTHENTICATOR', messenger: 'MESSENGER' })
    expect(config.apiProxyTimeout).toBe(60_000)
    expect(config.rateLimit).toEqual({ perUser: 5, perIp: 100, windowSeconds: 900, maxKeys: 100_000 })
    expect(config.clientsCacheSeconds).toBe(60)
    expect(config.trustProxy).toBe(0)
    // The contract's 10 s for every IAM call, and DECISIONS' 10 s for an /auth body.
    expect(config.iamTimeoutSeconds).toBe(10)
    expect(config.authBodyTimeoutSeconds).toBe(10)
  })
  it('has its defaults in one place: nuxt.config.ts ships that tree, and the parser falls back to the same values', async () => {
    vi.stubGlobal('defineNuxtConfig', (config: unknown) => config)
    try {
      const { default: layer } = await import('../../nuxt.config') as unknown as { default: { runtimeConfig: { svcGateway: RawGatewayConfig } } }
      expect(layer.runtimeConfig.svcGateway).toBe(GATEWAY_DEFAULTS)
      expect(parseGatewayConfig(GATEWAY_DEFAULTS, [SECRET])).toEqual(parseGatewayConfig({}, [SECRET]))
      // Not written a second time: nuxt.config.ts holds no literal default of its own.
      expect(readFileSync(new URL('../../nuxt.config.ts', import.meta.url), 'utf8')).not.toMatch(/clientsCacheSeconds|shutdownTimeout|\/iam\/user\/userInfo/)
    }
    finally {
      vi.unstubAllGlobals()
    }
  })

  it('is documented as it is: every APP_* variable of the tree has the README configuration table\'s row, with its default', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
    const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('\n## ', readme.indexOf('## Configuration') + 5))
    /** The README's rows: variable -> its default as written ('' for empty, off or required). */
    const documented = new Map<string, string>()
    for (const [, first, more, value] of section.matchAll(/^\| `(APP_[A-Z_]+)`((?: \/ `_[A-Z_]+`)*) \| ([^|]+) \|/gm)) {
      const names = first! + (more ?? '')
      const [head, ...suffixes] = names.split(' / ').map(name => name.replace(/`/g, ''))
      const values = value!.trim().split(' / ').map(part => /^`([^`]*)`/.exec(part.trim())?.[1] ?? '')
      const base = head!.replace(/_[A-Z]+$/, '')
      ;[head!, ...suffixes.map(suffix => base + suffix)].forEach((name, index) => documented.set(name, values[Math.min(index, values.length - 1)]!))
    }
    const leaves: [string, string][] = []
    const walk = (tree: Record<string, unknown>, path: string[]) => {
      for (const [key, value] of Object.entries(tree)) {
        if (value && typeof value === 'object') walk(value as Record<string, unknown>, [...path, key])
        else leaves.push([envName([...path, key]), value === false || value === '' ? '' : String(value)])
      }
    }
    walk(GATEWAY_DEFAULTS, [])
    for (const [name, value] of leaves) {
      expect(documented.has(name), `${name} has no row in the README's configuration table`).toBe(true)
      // A boolean that is off is written `false`; every other empty default as a word (empty, off, required).
      const written = documented.get(name)!
      expect(written === 'false' ? '' : written, name).toBe(value)
    }
    expect([...documented.keys()].filter(name => !leaves.some(([leaf]) => leaf === name)), 'rows of the README with no setting').toEqual([])
  })
  it('says the IAM timeout in its 504 message: the contract\'s text with the default', () => {
    expect(iamTimeoutMessage(10)).toBe('IAM không phản hồi sau 10 giây.')
    expect(iamTimeoutMessage(2)).toBe('IAM không phản hồi sau 2 giây.')
  })
  it('coerces values as Nitro hands them over', () => {
    const config = parseGatewayConfig({
      auth: {
        mock: 1,
        baseURL: 'http://127.0.0.1:9000/',
        clientId: 123,
        endpoints: { otpSend: '', clients: 'iam/clients' },
        timeout: 3,
        mapping: { permissionType: '' },
      },
      apiProxyTarget: 'http://127.0.0.1:9001/v1/',
      apiProxyTimeout: '1500',
      authBodyTimeout: '2',
      trustedOrigins: 'https://A.example/, https://b.example',
      trustProxy: true,
    }, [SECRET])
    expect(config.mock).toBe(true)
    expect(config.baseURL).toBe('http://127.0.0.1:9000')
    expect(config.clientId).toBe('123')
    expect(config.endpoints.otpSend).toBe('')
    expect(config.endpoints.clients).toBe('/iam/clients')
    expect(config.iamTimeoutSeconds).toBe(3)
    expect(config.mapping.permissionType).toBe('')
    expect(config.apiProxyTarget).toBe('http://127.0.0.1:9001/v1')
    expect(config.apiProxyTimeout).toBe(1500)
    expect(config.authBodyTimeoutSeconds).toBe(2)
    expect(config.trustedOrigins).toEqual(['https://a.example', 'https://b.example'])
    expect(config.trustProxy).toBe(1)
  })
  it('keeps the new time limits within an hour (Node fires a longer timer at once)', () => {
    expect(() => parseGatewayConfig({ auth: { timeout: '3000000' } }, [SECRET])).toThrow(/APP_AUTH_TIMEOUT phải là số nguyên từ 1 đến 3600/)
    expect(() => parseGatewayConfig({ authBodyTimeout: 3601 }, [SECRET])).toThrow(/APP_AUTH_BODY_TIMEOUT phải là số nguyên từ 1 đến 3600/)
    expect(parseGatewayConfig({ auth: { timeout: 3600 }, authBodyTimeout: '3600' }, [SECRET])).toMatchObject({ iamTimeoutSeconds: 3600, authBodyTimeoutSeconds: 3600 })
  })
  it('names the variable of a bad address', () => {
    expect(() => parseGatewayConfig({ auth: { baseURL: 'not a url' } }, [SECRET])).toThrow(/APP_AUTH_BASE_URL/)
    expect(() => parseGatewayConfig({ apiProxyTarget: 'ftp://x' }, [SECRET])).toThrow(/APP_API_PROXY_TARGET/)
    expect(() => parseGatewayConfig({ apiProxyTarget: 'http://x/?a=1' }, [SECRET])).toThrow(/APP_API_PROXY_TARGET/)
  })
})

describe('operations settings', () => {
  it('gives the defaults: info, json, access lines on, metrics off (on loopback when on), 30 s to shut down, idle connections kept 65 s', () => {
    const config = parseGatewayConfig({}, [SECRET])
    expect(config.logging).toEqual({ level: 'info', format: 'json', access: true })
    expect(config.metrics).toEqual({ port: 0, host: '127.0.0.1' })
    expect(config.shutdownTimeoutSeconds).toBe(30)
    // Longer than the 60 s nginx (upstream keepalive_timeout) and AWS load balancers keep their idle connections.
    expect(config.keepAliveTimeoutSeconds).toBe(65)
  })

  it('reads them as the environment gives them', () => {
    const config = parseGatewayConfig({ logLevel: 'DEBUG', logFormat: 'pretty', accessLog: 'false', metricsPort: '9464', metricsHost: '127.0.0.1', shutdownTimeout: '5', keepAliveTimeout: '620' }, [SECRET])
    expect(config.logging).toEqual({ level: 'debug', format: 'pretty', access: false })
    expect(config.metrics).toEqual({ port: 9464, host: '127.0.0.1' })
    expect(config.shutdownTimeoutSeconds).toBe(5)
    expect(config.keepAliveTimeoutSeconds).toBe(620)
    expect(parseGatewayConfig({ metricsPort: 9464, accessLog: 0 }, [SECRET])).toMatchObject({ metrics: { port: 9464 }, logging: { access: false } })
  })

  it('takes a Redis address ioredis can use, and never repeats it in a refusal (it may hold a password)', () => {
    expect(parseGatewayConfig({ redisUrl: 'redis://:s%40cret@cache:6379/2' }, [SECRET]).redis).toMatchObject({ kind: 'standalone', url: 'redis://:s%40cret@cache:6379/2', password: 's@cret', tls: false })
    expect(parseGatewayConfig({ redisUrl: 'rediss://cache' }, [SECRET]).redis).toMatchObject({ kind: 'standalone', url: 'rediss://cache', tls: true })
    expect(parseGatewayConfig({ redisUrl: '' }, [SECRET]).redis).toBeUndefined()
    expect(() => parseGatewayConfig({ redisUrl: 'redis://:p%zz-secret@cache' }, [SECRET])).toThrow(expect.objectContaining({ message: expect.not.stringContaining('secret') }))
  })

  it('keeps the nextTick shape only when asked (APP_KEEP_TICK_SHAPE: it changes the whole process)', () => {
    expect(parseGatewayConfig({}, [SECRET]).keepTickShape).toBe(false)
    expect(parseGatewayConfig({ keepTickShape: '' }, [SECRET]).keepTickShape).toBe(false)
    expect(parseGatewayConfig({ keepTickShape: 'true' }, [SECRET]).keepTickShape).toBe(true)
    expect(parseGatewayConfig({ keepTickShape: 1 }, [SECRET]).keepTickShape).toBe(true)
  })

  it.each([
    [{ logLevel: 'loud' }, /APP_LOG_LEVEL/],
    [{ logFormat: 'xml' }, /APP_LOG_FORMAT/],
    [{ accessLog: 'sometimes' }, /APP_ACCESS_LOG/],
    [{ metricsPort: '70000' }, /APP_METRICS_PORT/],
    [{ metricsPort: 'http' }, /APP_METRICS_PORT/],
    [{ shutdownTimeout: '-1' }, /APP_SHUTDOWN_TIMEOUT/],
    [{ keepAliveTimeout: '0' }, /APP_KEEP_ALIVE_TIMEOUT phải là số nguyên >= 1 \(nhận được '0'\)/],
    [{ keepAliveTimeout: '5.5' }, /APP_KEEP_ALIVE_TIMEOUT phải là số nguyên >= 1/],
    [{ keepAliveTimeout: '3601' }, /APP_KEEP_ALIVE_TIMEOUT phải là số nguyên từ 1 đến 3600/],
    [{ keepTickShape: 'sometimes' }, /APP_KEEP_TICK_SHAPE/],
    [{ redisUrl: 'redis://cache:63x9' }, /APP_REDIS_URL không phải địa chỉ Redis hợp lệ/],
    [{ redisUrl: 'redis://:p%zz@cache:6379' }, /APP_REDIS_URL không phải địa chỉ Redis hợp lệ/],
    [{ redisUrl: 'http://cache:6379' }, /APP_REDIS_URL phải bắt đầu bằng redis:\/\/ hoặc rediss:\/\//],
    [{ redisUrl: 'cache:6379' }, /APP_REDIS_URL/],
  ])('refuses %j, naming the variable', (raw, message) => {
    expect(() => parseGatewayConfig(raw, [SECRET])).toThrow(message)
  })
})

describe('reading APP_* variables', () => {
  it.each([
    [['auth', 'baseURL'], 'APP_AUTH_BASE_URL'],
    [['auth', 'endpoints', 'userInfo'], 'APP_AUTH_ENDPOINTS_USER_INFO'],
    [['auth', 'mapping', 'expiresIn'], 'APP_AUTH_MAPPING_EXPIRES_IN'],
    [['auth', 'authenMethod', 'messenger'], 'APP_AUTH_AUTHEN_METHOD_MESSENGER'],
    [['auth', 'clientsCacheSeconds'], 'APP_AUTH_CLIENTS_CACHE_SECONDS'],
    [['session', 'secretPrevious'], 'APP_SESSION_SECRET_PREVIOUS'],
    [['apiProxyTarget'], 'APP_API_PROXY_TARGET'],
    [['rateLimit', 'maxKeys'], 'APP_RATE_LIMIT_MAX_KEYS'],
    [['trustProxy'], 'APP_TRUST_PROXY'],
    [['logLevel'], 'APP_LOG_LEVEL'],
    [['logFormat'], 'APP_LOG_FORMAT'],
    [['accessLog'], 'APP_ACCESS_LOG'],
    [['metricsPort'], 'APP_METRICS_PORT'],
    [['metricsHost'], 'APP_METRICS_HOST'],
    [['shutdownTimeout'], 'APP_SHUTDOWN_TIMEOUT'],
    [['keepAliveTimeout'], 'APP_KEEP_ALIVE_TIMEOUT'],
    [['keepTickShape'], 'APP_KEEP_TICK_SHAPE'],
  ])('%j is %s', (path, name) => {
    expect(envName(path)).toBe(name)
  })

  it('puts each set variable over its default, as raw text, and nothing else', () => {
    const tree = { auth: { baseURL: '', mock: false, endpoints: { login: '/a' } }, session: { secret: '' }, apiProxyTimeout: 60000 }
    const env = { APP_AUTH_MOCK: '1', APP_SESSION_SECRET: '0123456789'.repeat(4), APP_API_PROXY_TIMEOUT: '', APP_OTHER: 'x', NUXT_AUTH_BASE_URL: 'http://nuxt' }
    expect(overlayEnv(tree, env)).toEqual({
      auth: { baseURL: '', mock: '1', endpoints: { login: '/a' } },
      session: { secret: '0123456789'.repeat(4) },
      apiProxyTimeout: '',
    })
    const config = parseGatewayConfig(overlayEnv(tree, env), ['s'.repeat(32)])
    expect(config.mock).toBe(true)
    expect(config.apiProxyTimeout).toBe(60_000)
  })
})
