// The layering of server/ (docs/architecture.md), checked by `npm run lint:deps` in npm test's lint phase.
// Layers from the bottom; a layer imports only those below it (and itself). Concerns of one level never import each
// other, but where a line below says so.
const LAYERS = [
  ['core', '^server/core/'],
  ['ops', '^server/ops/'],
  ['http', '^server/http/'],
  ['stores', '^server/stores/'],
  ['session', '^server/session/'],
  ['iam, oidc', '^server/(iam|oidc)/'],
  ['proxy, verify', '^server/(proxy|verify)/'],
  ['gate', '^server/gate/'],
  ['the server and Nitro\'s folders', '^server/(node-server\\.ts|preset\\.ts|dev/|routes/|plugins/|utils/)'],
]

const layerRules = LAYERS.slice(0, -1).map(([name, path], index) => ({
  name: `${name.replace(/\W+/g, '-')}-imports-no-layer-above`,
  comment: `${name} sits below ${LAYERS.slice(index + 1).map(([above]) => above).join(', ')}: it imports none of them.`,
  severity: 'error',
  from: { path },
  to: { path: LAYERS.slice(index + 1).map(([, above]) => above) },
}))

/** Concerns of one level: never each other, one way at most. */
const besides = [
  ['iam-not-oidc', '^server/iam/', '^server/oidc/', 'the contract IAM and OpenID Connect are two kinds of IAM: neither knows the other'],
  ['oidc-not-iam', '^server/oidc/', '^server/iam/', 'the contract IAM and OpenID Connect are two kinds of IAM: neither knows the other'],
  ['proxy-not-verify', '^server/proxy/', '^server/verify/', 'the proxy and forward auth are two ways out: neither knows the other'],
  ['verify-not-proxy', '^server/verify/', '^server/proxy/', 'the proxy and forward auth are two ways out: neither knows the other'],
  ['proxy-not-iam-or-oidc', '^server/proxy/', '^server/(iam|oidc)/', 'the proxy asks the session for its token (session/token.ts), whatever the kind of IAM'],
  ['verify-not-iam', '^server/verify/', '^server/iam/', 'forward auth reads the session, never the contract IAM'],
].map(([name, from, to, comment]) => ({ name, comment, severity: 'error', from: { path: from }, to: { path: to } }))

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import circles anywhere in server/: each file stands above everything it imports.',
      severity: 'error',
      from: { path: '^server/' },
      to: { circular: true },
    },
    {
      name: 'core-is-pure',
      comment: 'server/core/ is pure: it imports only server/core/, shared/ and Node\'s own modules (no h3, Nitro, undici, Redis, logger).',
      severity: 'error',
      from: { path: '^server/core/' },
      to: { pathNot: ['^server/core/', '^shared/'], dependencyTypesNot: ['core'] },
    },
    ...layerRules,
    ...besides,
  ],
  options: {
    includeOnly: '^(server|shared)/',
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
  },
}
