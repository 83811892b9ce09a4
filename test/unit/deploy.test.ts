import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parse, parseAllDocuments } from 'yaml'
import { supportedMajors } from '../../.ci/runtime.mjs'
import { overlayEnv } from '../../server/core/config/coerce'
import { parseGatewayConfig, readSecrets } from '../../server/core/config/config'
import { GATEWAY_DEFAULTS } from '../../server/core/config/defaults'

// The container and the deployment sketches cannot run here (no Docker daemon, no cluster): what can be checked is
// that they parse and say what the README promises.
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')

interface EnvVar { name: string, value?: string, valueFrom?: { secretKeyRef?: { name: string, key: string, optional?: boolean } } }

const SECRET = 's'.repeat(64)

/**
 * The configuration a gateway would start with from these variables, as the server reads it (defaults, then the
 * variables; the secrets checked): it throws what the server would stop on.
 */
function startWith(env: Record<string, string>) {
  return parseGatewayConfig(overlayEnv(GATEWAY_DEFAULTS, env), readSecrets(env.APP_SESSION_SECRET, env.APP_SESSION_SECRET_PREVIOUS))
}

/** What each login kind needs, as the operator of deploy/compose.yaml or the manifest gives it. */
const KINDS = {
  iam: { APP_AUTH_BASE_URL: 'https://iam.example.vn' },
  oidc: { APP_AUTH_KIND: 'oidc', APP_OIDC_ISSUER: 'https://sso.example.vn/realms/acme', APP_OIDC_CLIENT_ID: 'orders-web', APP_OIDC_CLIENT_SECRET: 'provider-secret' },
}

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile')
  const stages = dockerfile.split(/^FROM /m).slice(1)

  it('builds in one stage and runs only the built output in another, on the newest Node LTS the layer supports, as the non-root node user', () => {
    expect(stages).toHaveLength(2)
    const newest = supportedMajors().at(-1)
    expect(newest).toBeGreaterThanOrEqual(24)
    for (const stage of stages) expect(stage).toMatch(new RegExp(`^node:${newest}-`))
    const run = stages[1]!
    expect(run).toMatch(/^COPY --from=build --chown=node:node \/src\/\.image-output \.\/\.output$/m)
    expect(run).not.toMatch(/npm (ci|install)|COPY \. /)
    expect(run).toMatch(/^USER node$/m)
    expect(run).toMatch(/^CMD \["node", "\.output\/server\/index\.mjs"\]$/m)
  })

  it('checks its health on /healthz', () => {
    expect(stages[1]).toMatch(/^HEALTHCHECK .*\n?.*\/healthz/m)
  })

  it('copies a layer\'s tarball at the app\'s root in with the lockfile, before npm ci, and builds the app at the root unless told', () => {
    const build = stages[0]!
    expect(build.indexOf('COPY package.json package-lock.json *.tgz ./\n')).toBeGreaterThan(-1)
    expect(build.indexOf('COPY package.json package-lock.json *.tgz ./\n')).toBeLessThan(build.indexOf('RUN npm ci'))
    expect(build).toMatch(/^ARG SOURCE_DIR=\.$/m)
    expect(read('.dockerignore')).not.toMatch(/tgz/)
  })

  it('leaves an app\'s .env files out of the context (nuxt build would load their secrets and settings into the build)', () => {
    const ignored = read('.dockerignore').split('\n')
    expect(ignored).toContain('**/.env')
    expect(ignored).toContain('**/.env.*')
  })
})

describe('deploy/compose.yaml', () => {
  const compose = parse(read('deploy/compose.yaml'), { merge: true }) as {
    services: Record<string, { environment?: Record<string, string>, stop_grace_period?: string, volumes?: string[], image?: string }>
  }
  const gateways = Object.entries(compose.services).filter(([name]) => name.startsWith('gateway-'))

  it('runs three gateways sharing one secret and one Redis, stopped after their shutdown timeout', () => {
    expect(gateways.map(([name]) => name)).toEqual(['gateway-1', 'gateway-2', 'gateway-3'])
    for (const [, gateway] of gateways) {
      const env = gateway.environment!
      expect(env.APP_SESSION_SECRET).toMatch(/^\$\{APP_SESSION_SECRET:\?/)
      expect(env.APP_REDIS_URL).toBe('redis://redis:6379')
      expect(env.APP_TRUST_PROXY).toBe('1')
      // The metrics listener is loopback unless opened: opened here, said outright.
      if (env.APP_METRICS_PORT) expect(env.APP_METRICS_HOST).toBe('0.0.0.0')
      expect(Number.parseInt(gateway.stop_grace_period!)).toBeGreaterThan(Number(env.APP_SHUTDOWN_TIMEOUT))
    }
    expect(compose.services.redis!.image).toMatch(/^redis:/)
  })

  it('keeps revocations through restarts: Redis with an append-only file on a volume, a journal volume per gateway', () => {
    const redis = compose.services.redis as { command: string[], volumes: string[] }
    expect(redis.command.join(' ')).toMatch(/--appendonly yes/)
    expect(redis.volumes.some(volume => volume.endsWith(':/data'))).toBe(true)
    const journals = gateways.map(([, gateway]) => {
      const journal = gateway.environment!.APP_REVOCATION_JOURNAL!
      const folder = journal.slice(0, journal.lastIndexOf('/'))
      return gateway.volumes!.find(volume => volume.endsWith(`:${folder}`))!.split(':')[0]
    })
    expect(new Set(journals).size).toBe(3)
  })

  it('puts nginx in front with an upstream of exactly those three', () => {
    const mount = compose.services.nginx!.volumes!.find(volume => volume.includes('nginx'))!
    const conf = read(`deploy/${mount.split(':')[0]!.replace(/^\.\//, '')}`)
    expect([...conf.matchAll(/^\s*server (\S+);/gm)].map(match => match[1])).toEqual(gateways.map(([name]) => `${name}:3000`))
    expect(conf).toMatch(/proxy_request_buffering off;/)
  })

  it('builds the app at its root unless SOURCE_DIR says otherwise, and starts for the contract\'s IAM and for an OpenID Provider', () => {
    const gateway = compose.services['gateway-1'] as unknown as { build: { args: Record<string, string> }, environment: Record<string, string> }
    expect(gateway.build.args.SOURCE_DIR).toBe('${SOURCE_DIR:-.}')
    // Compose's own interpolation: ${NAME:-default}, and ${NAME:?message} refusing an unset NAME.
    const interpolate = (env: Record<string, string>) => Object.fromEntries(Object.entries(gateway.environment).map(([name, value]) => [name,
      value.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_, variable: string, how?: string, word = '') => {
        if (env[variable]) return env[variable]!
        if (how === '?') throw new Error(`${variable}: ${word}`)
        return how === '-' ? word : ''
      })]))
    expect(() => interpolate({})).toThrow(/^APP_SESSION_SECRET: set APP_SESSION_SECRET/)
    const iam = startWith(interpolate({ APP_SESSION_SECRET: SECRET, ...KINDS.iam }))
    expect([iam.kind, iam.baseURL, iam.redis]).toEqual(['iam', 'https://iam.example.vn', expect.objectContaining({ kind: 'standalone', url: 'redis://redis:6379' })])
    const oidc = startWith(interpolate({ APP_SESSION_SECRET: SECRET, ...KINDS.oidc }))
    expect([oidc.kind, oidc.oidc?.issuer, oidc.oidc?.clientId, oidc.oidc?.clientSecret]).toEqual(['oidc', 'https://sso.example.vn/realms/acme', 'orders-web', 'provider-secret'])
  })

  it.each(['deploy/nginx.conf', 'deploy/nginx.compose.conf'])('%s passes WebSocket handshakes on (Upgrade and Connection)', (path) => {
    const conf = read(path)
    expect(conf).toMatch(/map \$http_upgrade \$connection_upgrade \{\s*default upgrade;\s*'' *'';\s*\}/)
    expect(conf).toMatch(/proxy_set_header Upgrade \$http_upgrade;/)
    expect(conf).toMatch(/proxy_set_header Connection \$connection_upgrade;/)
    expect(conf).toMatch(/proxy_http_version 1\.1;/)
  })
})

describe('deploy/kubernetes.yaml', () => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a manifest is read as loose data
  const documents = parseAllDocuments(read('deploy/kubernetes.yaml')).map(document => document.toJS() as { kind: string, metadata: { name: string }, spec?: any, stringData?: Record<string, string> })
  const byKind = (kind: string) => documents.find(document => document.kind === kind)!

  it('holds a Deployment and a Service; its steps apply no Secret, so a real one is never replaced by a file\'s value', () => {
    expect(documents.map(document => document.kind)).toEqual(['Deployment', 'Service'])
    const manifest = read('deploy/kubernetes.yaml')
    const applied = [...manifest.matchAll(/kubectl apply -f (\S+)/g)].map(match => match[1]!)
    expect(applied).toEqual(['deploy/kubernetes.yaml'])
    for (const file of applied) expect(parseAllDocuments(read(file)).map(document => document.toJS().kind)).not.toContain('Secret')
    expect(manifest).toMatch(/kubectl create secret generic svc-auth-gateway --from-literal=session-secret=\$\(openssl rand -hex 32\)/)
  })

  it('deploy/kubernetes-secret.yaml\'s placeholder is refused at start, naming the variable', () => {
    const { stringData } = parse(read('deploy/kubernetes-secret.yaml')) as { stringData: Record<string, string> }
    expect(() => readSecrets(stringData['session-secret'], '')).toThrow('APP_SESSION_SECRET là giá trị mẫu của tài liệu, ai cũng biết: tạo khoá riêng (openssl rand -hex 32).')
  })

  it('starts for the contract\'s IAM as it is, and for an OpenID Provider with APP_AUTH_KIND=oidc', () => {
    const env = byKind('Deployment').spec.template.spec.containers[0].env as EnvVar[]
    const secrets: Record<string, string> = { 'session-secret': SECRET, 'oidc-client-secret': 'provider-secret' }
    const variables = (over: Record<string, string>) => ({ ...Object.fromEntries(env.map(variable => [variable.name, variable.value ?? secrets[variable.valueFrom!.secretKeyRef!.key]!])), ...over })
    const iam = startWith(variables({}))
    expect([iam.kind, iam.baseURL]).toEqual(['iam', 'https://iam.example.vn'])
    const oidc = startWith(variables({ APP_AUTH_KIND: 'oidc' }))
    expect([oidc.kind, oidc.oidc?.issuer, oidc.oidc?.clientId, oidc.oidc?.clientSecret]).toEqual(['oidc', 'https://sso.example.vn/realms/acme', 'orders-web', 'provider-secret'])
    // The OpenID client secret is the Secret's, and optional (a public client has none).
    expect(env.find(variable => variable.name === 'APP_OIDC_CLIENT_SECRET')!.valueFrom!.secretKeyRef).toEqual({ name: 'svc-auth-gateway', key: 'oidc-client-secret', optional: true })
  })

  it('probes /readyz and /healthz, and gives the pod longer than the preStop pause plus the shutdown timeout', () => {
    const pod = byKind('Deployment').spec.template.spec
    const container = pod.containers[0]
    expect(container.readinessProbe.httpGet.path).toBe('/readyz')
    expect(container.livenessProbe.httpGet.path).toBe('/healthz')
    const env = container.env as EnvVar[]
    const timeout = Number(env.find(variable => variable.name === 'APP_SHUTDOWN_TIMEOUT')!.value)
    const pause = Number(container.lifecycle.preStop.exec.command[1])
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(timeout + pause)
    expect(pod.securityContext.runAsNonRoot).toBe(true)
    // The metrics listener is loopback unless opened: opened for Prometheus here, said outright.
    expect(env.find(variable => variable.name === 'APP_METRICS_HOST')?.value).toBe('0.0.0.0')
    // The revocation journal lives on a mounted volume (the root file system is read-only).
    const journal = env.find(variable => variable.name === 'APP_REVOCATION_JOURNAL')!.value!
    const mount = (container.volumeMounts as { name: string, mountPath: string }[]).find(volume => journal.startsWith(`${volume.mountPath}/`))!
    expect(pod.volumes.map((volume: { name: string }) => volume.name)).toContain(mount.name)
  })

  it('reads the session secret from the Secret (deploy/kubernetes-secret.yaml\'s), and the Service reaches the container port', () => {
    const secret = parse(read('deploy/kubernetes-secret.yaml')) as { kind: string, metadata: { name: string }, stringData: Record<string, string> }
    expect(secret.kind).toBe('Secret')
    const container = byKind('Deployment').spec.template.spec.containers[0]
    for (const variable of (container.env as EnvVar[]).filter(variable => variable.valueFrom)) {
      const ref = variable.valueFrom!.secretKeyRef!
      expect(ref.name).toBe(secret.metadata.name)
      expect(Object.keys(secret.stringData), variable.name).toContain(ref.key)
    }
    const ports = (container.ports as { name: string }[]).map(port => port.name)
    expect(ports).toContain(byKind('Service').spec.ports[0].targetPort)
    expect(byKind('Service').spec.selector).toEqual(byKind('Deployment').spec.selector.matchLabels)
  })
})

describe('every APP_* variable the container files set', () => {
  it('is one the README documents', () => {
    const readme = read('README.md')
    const used = new Set([...`${read('Dockerfile')}${read('deploy/compose.yaml')}${read('deploy/kubernetes.yaml')}${read('deploy/kubernetes-secret.yaml')}`.matchAll(/\bAPP_[A-Z_]+/g)].map(match => match[0]))
    for (const name of used) expect(readme, name).toContain(`\`${name}\``)
  })
})

describe('the forward-auth files (deploy/*-forward-auth*, run by test/e2e/forward-auth.test.ts)', () => {
  it('are shown in the README exactly as they are: each excerpt is lines of its file', () => {
    const blocks = [...read('README.md').matchAll(/^```\w+\n# (deploy\/\S+) \(excerpt\)\n([\s\S]*?)\n```$/gm)]
    expect(blocks.map(block => block[1])).toEqual(['deploy/nginx-forward-auth.conf', 'deploy/Caddyfile.forward-auth', 'deploy/traefik-forward-auth.yaml'])
    for (const [, file, excerpt] of blocks) expect(read(file!), file).toContain(`${excerpt}\n`)
  })

  it('Traefik: the check is /auth/verify, copies every X-Auth-Request-* header the gateway sends, and the idle timeout\'s re-sealed cookies', async () => {
    const { AUTH_REQUEST_HEADERS } = await import('../../server/core/verify/forward-auth')
    const traefik = parse(read('deploy/traefik-forward-auth.yaml')) as { http: { middlewares: Record<string, { forwardAuth: { address: string, authResponseHeaders: string[], addAuthCookiesToResponse?: string[] } }> } }
    const { forwardAuth } = traefik.http.middlewares['svc-verify-grafana']!
    expect(new URL(forwardAuth.address).pathname).toBe('/auth/verify')
    expect(forwardAuth.authResponseHeaders.map(name => name.toLowerCase())).toEqual([...AUTH_REQUEST_HEADERS])
    expect(forwardAuth.addAuthCookiesToResponse).toEqual(['svc_session', 'svc_idle'])
  })

  it('nginx and Caddy set or copy every X-Auth-Request-* header the gateway sends', async () => {
    const { AUTH_REQUEST_HEADERS } = await import('../../server/core/verify/forward-auth')
    const nginx = read('deploy/nginx-forward-auth.conf').toLowerCase()
    const caddy = read('deploy/Caddyfile.forward-auth').toLowerCase()
    for (const name of AUTH_REQUEST_HEADERS) {
      expect(nginx).toContain(`proxy_set_header ${name} $`)
      expect(caddy).toContain(`request_header -${name}\n`)
      expect(caddy).toMatch(new RegExp(`copy_headers .*\\b${name}\\b`))
    }
  })
})
