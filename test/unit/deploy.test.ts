import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parse, parseAllDocuments } from 'yaml'

// The container and the deployment sketches cannot run here (no Docker daemon, no cluster): what can be checked is
// that they parse and say what the README promises.
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')

interface EnvVar { name: string, value?: string, valueFrom?: { secretKeyRef?: { name: string, key: string } } }

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile')
  const stages = dockerfile.split(/^FROM /m).slice(1)

  it('builds in one Node 20 stage and runs only the built output in another, as the non-root node user', () => {
    expect(stages).toHaveLength(2)
    for (const stage of stages) expect(stage).toMatch(/^node:20-/)
    const run = stages[1]!
    expect(run).toMatch(/^COPY --from=build --chown=node:node \/output \.\/\.output$/m)
    expect(run).not.toMatch(/npm (ci|install)|COPY \. /)
    expect(run).toMatch(/^USER node$/m)
    expect(run).toMatch(/^CMD \["node", "\.output\/server\/index\.mjs"\]$/m)
  })

  it('checks its health on /healthz', () => {
    expect(stages[1]).toMatch(/^HEALTHCHECK .*\n?.*\/healthz/m)
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

  it('holds a Secret, a Deployment and a Service', () => {
    expect(documents.map(document => document.kind)).toEqual(['Secret', 'Deployment', 'Service'])
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

  it('reads the session secret from the Secret, and the Service reaches the container port', () => {
    const secret = byKind('Secret')
    const container = byKind('Deployment').spec.template.spec.containers[0]
    const ref = (container.env as EnvVar[]).find(variable => variable.name === 'APP_SESSION_SECRET')!.valueFrom!.secretKeyRef!
    expect(ref.name).toBe(secret.metadata.name)
    expect(Object.keys(secret.stringData!)).toContain(ref.key)
    const ports = (container.ports as { name: string }[]).map(port => port.name)
    expect(ports).toContain(byKind('Service').spec.ports[0].targetPort)
    expect(byKind('Service').spec.selector).toEqual(byKind('Deployment').spec.selector.matchLabels)
  })
})

describe('every APP_* variable the container files set', () => {
  it('is one the README documents', () => {
    const readme = read('README.md')
    const used = new Set([...`${read('Dockerfile')}${read('deploy/compose.yaml')}${read('deploy/kubernetes.yaml')}`.matchAll(/\bAPP_[A-Z_]+/g)].map(match => match[0]))
    for (const name of used) expect(readme, name).toContain(`\`${name}\``)
  })
})

describe('the forward-auth files (deploy/*-forward-auth*, run by test/e2e/forward-auth.test.ts)', () => {
  it('are shown in the README exactly as they are: each excerpt is lines of its file', () => {
    const blocks = [...read('README.md').matchAll(/^```\w+\n# (deploy\/\S+) \(excerpt\)\n([\s\S]*?)\n```$/gm)]
    expect(blocks.map(block => block[1])).toEqual(['deploy/nginx-forward-auth.conf', 'deploy/Caddyfile.forward-auth', 'deploy/traefik-forward-auth.yaml'])
    for (const [, file, excerpt] of blocks) expect(read(file!), file).toContain(`${excerpt}\n`)
  })

  it('Traefik: the check is /auth/verify and copies every X-Auth-Request-* header the gateway sends', async () => {
    const { AUTH_REQUEST_HEADERS } = await import('../../server/core/verify/forward-auth')
    const traefik = parse(read('deploy/traefik-forward-auth.yaml')) as { http: { middlewares: Record<string, { forwardAuth: { address: string, authResponseHeaders: string[] } }> } }
    const { forwardAuth } = traefik.http.middlewares['svc-verify-grafana']!
    expect(new URL(forwardAuth.address).pathname).toBe('/auth/verify')
    expect(forwardAuth.authResponseHeaders.map(name => name.toLowerCase())).toEqual([...AUTH_REQUEST_HEADERS])
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
