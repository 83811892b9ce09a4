import { spawn, spawnSync } from 'node:child_process'
import { generateKeyPairSync, type JsonWebKey } from 'node:crypto'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'

/** Where Debian's glewlwyd package (2.7.5) puts what a server needs: the binary, its schema, its web pages, its modules. */
const PACKAGE = {
  binary: 'glewlwyd',
  schema: '/usr/share/doc/glewlwyd/database/init.sqlite3.sql.gz',
  webapp: '/usr/share/glewlwyd/webapp',
  webappConfig: '/usr/share/glewlwyd/templates/config.json',
  modules: '/usr/lib/glewlwyd',
}

/** The administrator the package's schema creates (glewlwyd's documented default). */
const ADMIN = { username: 'admin', password: 'password' }

/** The provider's address: 127.0.0.2, so its cookies stay apart from the gateway's on 127.0.0.1. */
const HOST = '127.0.0.2'

/** The provider's own name for its OpenID Connect plugin instance: the issuer is `<origin>/api/<PLUGIN>`. */
const PLUGIN = 'oidc'

/** A confidential client registered at the provider. */
export interface GlewlwydClient {
  clientId: string
  clientSecret: string
  /** How it may authenticate at the token endpoint. @default ['client_secret_post'] */
  tokenAuthMethods?: Array<'client_secret_basic' | 'client_secret_post'>
  redirectUris: string[]
  postLogoutRedirectUris: string[]
  backchannelLogoutUri?: string
}

export interface GlewlwydOptions {
  /** The clients to register. */
  clients: GlewlwydClient[]
  /** The access tokens' life in seconds. @default 3600 */
  accessTokenTtl?: number
}

export interface RunningGlewlwyd {
  /** The provider's origin, `http://127.0.0.2:<port>`. */
  url: string
  /** The issuer of its OpenID Connect plugin (`<url>/api/oidc`). */
  issuer: string
  /** The user registered for the tests, with its password. */
  user: { username: string, password: string, name: string, email: string }
  /** The public key the provider signs its tokens with. */
  publicKey: JsonWebKey
  /** Everything the provider printed (its log, level INFO). */
  log: () => string
  /** Stops the provider and removes its folder. */
  close: () => Promise<void>
}

/**
 * Debian's glewlwyd (an OpenID Provider written in C) started from scratch on 127.0.0.2, on a free port, in a folder of
 * its own: an SQLite database made from the package's schema, a configuration file, a copy of the package's web pages
 * (its login, grant and logout pages). Then configured through its admin API as an operator would, logged in as the
 * schema's default administrator: an OpenID Connect plugin instance signing with an RSA key made here (refresh tokens,
 * PKCE, revocation, session management and back-channel logout on), the scopes the gateway asks for, a user with a
 * password, and `options.clients`.
 */
export async function startGlewlwyd(options: GlewlwydOptions): Promise<RunningGlewlwyd> {
  const folder = mkdtempSync(join(tmpdir(), 'glewlwyd-'))
  try {
    createDatabase(join(folder, 'glewlwyd.db'))
    // The package's webapp/config.json is a link into /etc (a folder there in 2.7.5-3+deb12u1): a copy, with the template.
    cpSync(PACKAGE.webapp, join(folder, 'webapp'), { recursive: true, dereference: true, filter: source => source !== join(PACKAGE.webapp, 'config.json') })
    cpSync(PACKAGE.webappConfig, join(folder, 'webapp', 'config.json'))
    const server = await spawnGlewlwyd(folder)
    try {
      const provider = await configure(server.url, options)
      return { ...server, ...provider, issuer: `${server.url}/api/${PLUGIN}` }
    }
    catch (error) {
      await server.close()
      throw new Error(`${(error as Error).message}\nglewlwyd's log:\n${server.log()}`, { cause: error })
    }
  }
  catch (error) {
    rmSync(folder, { recursive: true, force: true })
    throw error
  }
}

/** The package's SQLite schema (which also creates the administrator `admin`/`password`), loaded with sqlite3. */
function createDatabase(path: string): void {
  const loaded = spawnSync('sqlite3', [path], { input: gunzipSync(readFileSync(PACKAGE.schema)), encoding: 'utf8' })
  if (loaded.status !== 0) throw new Error(`sqlite3 could not load glewlwyd's schema: ${loaded.error?.message ?? loaded.stderr}`)
}

/** A port free on the provider's address. */
function freeProviderPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, HOST, () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/** The server in `folder` once it answers `/config/`; a port taken meanwhile is chosen again. */
async function spawnGlewlwyd(folder: string): Promise<{ url: string, log: () => string, close: () => Promise<void> }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freeProviderPort()
    const url = `http://${HOST}:${port}`
    writeFileSync(join(folder, 'glewlwyd.conf'), configFile(folder, port, url))
    const child = spawn(PACKAGE.binary, ['--config-file', join(folder, 'glewlwyd.conf')], { stdio: ['ignore', 'pipe', 'pipe'] })
    let log = ''
    child.stdout!.on('data', (chunk: Buffer) => void (log += chunk))
    child.stderr!.on('data', (chunk: Buffer) => void (log += chunk))
    const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
    child.once('error', () => undefined) // no glewlwyd on PATH: seen as an exit below
    const close = async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
      rmSync(folder, { recursive: true, force: true })
    }
    const deadline = Date.now() + 20_000
    for (;;) {
      if (child.exitCode !== null || child.pid === undefined) break
      // It logs its start line after its listen succeeded: a server that answers before that is another one.
      if (log.includes('Glewlwyd started on port') && (await fetch(`${url}/config/`).then(answer => answer.ok, () => false))) {
        return { url, log: () => log, close }
      }
      if (Date.now() > deadline) {
        child.kill('SIGKILL')
        throw new Error(`glewlwyd did not answer at ${url} within 20 s:\n${log}`)
      }
      await new Promise(resolve => setTimeout(resolve, 50))
    }
    if (attempt === 5 || !/bind|address already in use|Error starting/i.test(log)) {
      throw new Error(`glewlwyd exited (is Debian's glewlwyd package installed?):\n${log}`)
    }
  }
}

/** The server's configuration file (libconfig), everything in `folder`, logging to the console. */
function configFile(folder: string, port: number, url: string): string {
  const mime = Object.entries({ '.html': 'text/html', '.css': 'text/css', '.js': 'application/javascript', '.json': 'application/json', '.png': 'image/png', '.ico': 'image/x-icon', '.ttf': 'font/ttf', '.woff': 'font/woff', '.woff2': 'font/woff2' })
  return `port=${port}
bind_address="${HOST}"
external_url="${url}"
login_url="login.html"
api_prefix="api"
static_files_path="${join(folder, 'webapp')}"
log_mode="console"
log_level="INFO"
cookie_secure=0
session_key="GLEWLWYD2_SESSION_ID"
session_expiration=3600
admin_scope="g_admin"
profile_scope="g_profile"
user_module_path="${PACKAGE.modules}/user"
client_module_path="${PACKAGE.modules}/client"
user_auth_scheme_module_path="${PACKAGE.modules}/scheme"
plugin_module_path="${PACKAGE.modules}/plugin"
hash_algorithm="SHA512"
database = { type = "sqlite3"; path = "${join(folder, 'glewlwyd.db')}"; };
static_files_mime_types = (
${mime.map(([extension, type]) => `  { extension = "${extension}"; mime_type = "${type}"; }`).join(',\n')}
);
`
}

/** The admin API's calls of an operator setting the provider up; any answer but 200 stops the start. */
async function configure(url: string, options: GlewlwydOptions) {
  let cookie = ''
  const call = async (method: string, path: string, body?: unknown) => {
    const answer = await fetch(`${url}/api${path}`, { method, headers: { 'content-type': 'application/json', cookie }, body: body === undefined ? undefined : JSON.stringify(body) })
    cookie = answer.headers.get('set-cookie')?.split(';')[0] ?? cookie
    const text = await answer.text()
    if (answer.status !== 200) throw new Error(`glewlwyd's admin API: ${method} ${path} answered ${answer.status} ${text}`)
    return text ? JSON.parse(text) as Record<string, unknown> : {}
  }
  await call('POST', '/auth/', ADMIN)

  // The clients' module keeps a property as one string unless its data format says "multiple"; the end-session
  // endpoint looks for the post-logout address in a list `post_logout_redirect_uris` (the shipped format names only
  // `post_logout_redirect_uri`, single): without this, no post-logout address is ever accepted.
  const clients = await call('GET', '/mod/client/database') as { parameters: { 'data-format': Record<string, unknown> } }
  clients.parameters['data-format'].post_logout_redirect_uris = { multiple: true, read: true, write: true }
  await call('PUT', '/mod/client/database', clients)
  await call('PUT', '/mod/client/database/reset')

  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const kid = 'glewlwyd-test'
  await call('POST', '/mod/plugin/', {
    module: 'oidc',
    name: PLUGIN,
    display_name: 'OpenID Connect',
    enabled: true,
    parameters: {
      'iss': `${url}/api/${PLUGIN}`,
      'jwks-private': JSON.stringify({ keys: [{ ...privateKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' }] }),
      'default-kid': kid,
      'access-token-duration': options.accessTokenTtl ?? 3600,
      'refresh-token-duration': 3600,
      'code-duration': 60,
      'refresh-token-rolling': true,
      'allow-non-oidc': false,
      'auth-type-code-enabled': true,
      'auth-type-refresh-enabled': true,
      'auth-type-token-enabled': false,
      'auth-type-client-enabled': false,
      'auth-type-password-enabled': false,
      'pkce-allowed': true,
      'introspection-revocation-allowed': true,
      // A client may revoke its own tokens (the gateway's logout revokes its refresh token): else only a bearer token.
      'introspection-revocation-allow-target-client': true,
      'session-management-allowed': true,
      'session-cookie-name': 'GLEWLWYD2_OIDC_SID',
      'session-cookie-expiration': 3600,
      'back-channel-logout-allowed': true,
      // Its end-session page lists the session's clients only with front-channel logout allowed (else a 400, and the
      // page can neither end the session nor send the browser back), whether or not a client has a front-channel URI.
      'front-channel-logout-allowed': true,
      'name-claim': 'mandatory',
      'email-claim': 'mandatory',
    },
  })
  // The scopes the gateway asks for by default; `openid` comes with the schema, without a password: a login needs one here.
  for (const name of ['profile', 'email', 'offline_access']) {
    await call('POST', '/scope/', { name, display_name: name, description: name, password_required: true, scheme: {} })
  }
  await call('PUT', '/scope/openid', { name: 'openid', display_name: 'OpenID', description: 'OpenID Connect', password_required: true, scheme: {} })
  const user = { username: 'orders-user', password: 'orders-user-password', name: 'Orders User', email: 'orders-user@example.test' }
  await call('POST', '/user/', { ...user, scope: ['openid', 'profile', 'email', 'offline_access'], enabled: true })
  for (const client of options.clients) {
    await call('POST', '/client/', {
      client_id: client.clientId,
      name: client.clientId,
      enabled: true,
      confidential: true,
      client_secret: client.clientSecret,
      token_endpoint_auth_method: client.tokenAuthMethods ?? ['client_secret_post'],
      authorization_type: ['code', 'refresh_token'],
      redirect_uri: client.redirectUris,
      post_logout_redirect_uris: client.postLogoutRedirectUris,
      ...(client.backchannelLogoutUri ? { backchannel_logout_uri: client.backchannelLogoutUri, backchannel_logout_session_required: 'true' } : {}),
    })
  }
  return { user, publicKey: publicKey.export({ format: 'jwk' }) }
}
