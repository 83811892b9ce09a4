// @ts-check
/**
 * The bench's servers, each started when a scenario first asks for it and shared by the scenarios after it: the Node
 * backend, nginx answering a constant, the development IAM, Redis holding 10,000 revocations, the bare gateway and
 * its login cookie; and the ways to start any other gateway or a Node script of bench/ (a peer). Every port comes from
 * the OS. Servers run on CPU 0; the load generator, the backends, Redis and the log collectors on CPU 1 (taskset). A
 * gateway's stdout goes through a pipe to a collector process (`cat` into bench/.tmp/NAME.log), as a container runtime
 * reads it. The playground is built before the first gateway starts, unless BENCH_SKIP_BUILD=1 and a build is there.
 */
import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, openSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { startDevIam } from '../dev/iam.mjs'
import { freePort, has, pin, startRevocationRedis, waitForHttp, waitForTcp } from './processes.mjs'

export const root = fileURLToPath(new URL('..', import.meta.url))
export const tmp = fileURLToPath(new URL('./.tmp/', import.meta.url))
export const GATEWAY = 'playground/.output/server/index.mjs'
export const log = (/** @type {unknown[]} */ ...args) => console.log('[bench]', ...args)

/** Installs a Debian package when missing and we are root; says which way it went. */
function ensurePackage(command, pkg) {
  if (has(command)) return true
  if (process.getuid?.() === 0 && has('apt-get')) {
    log(`${command} missing: installing the Debian package ${pkg}…`)
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
    spawnSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env })
    spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', pkg], { stdio: 'ignore', env })
  }
  const ok = has(command)
  log(ok ? `${command}: installed` : `${command}: not available, skipped`)
  return ok
}

/** @typedef {{ port: number, url: string, child: import('node:child_process').ChildProcess }} Server */

/** What the scenarios of one run share: started servers, peers that failed, figures one scenario leaves for another. */
export class Bench {
  constructor() {
    mkdirSync(tmp, { recursive: true })
    /** @type {import('node:child_process').ChildProcess[]} */
    this.children = []
    /** Peers and set-ups that did not start, with the reason: the table reports them as failed. */
    this.failed = new Map()
    /** Figures a scenario leaves for a later one's text (the seal scenario's revocation check time). */
    this.results = /** @type {Record<string, any>} */ ({})
    this.secret = randomBytes(32).toString('hex')
    this.tools = { wrk: ensurePackage('wrk', 'wrk'), nginx: ensurePackage('nginx', 'nginx'), redis: ensurePackage('redis-server', 'redis-server') }
    /** @type {Map<string, Promise<any>>} */
    this.started = new Map()
  }

  /** `start()` once per run under `key`; every later call gets the same promise. */
  once(key, start) {
    if (!this.started.has(key)) this.started.set(key, start())
    return this.started.get(key)
  }

  /** Runs `start`; on failure records `name` as failed (the table says so) and resolves undefined. */
  async attempt(name, start) {
    try {
      return await start()
    }
    catch (error) {
      this.failed.set(name, error instanceof Error ? error.message : String(error))
      log(`${name}: FAILED (${this.failed.get(name)})`)
      return undefined
    }
  }

  /** Where a gateway's stdout collector writes: bench/.tmp/NAME.log. */
  logOf(name) {
    return `${tmp}${name}.log`
  }

  /**
   * Starts a process pinned to `cpu` and waits until `port` answers HTTP. With `logName`, its stdout is a pipe read by
   * a collector on CPU 1 (`cat` into bench/.tmp/NAME.log).
   * @param {string} name
   * @param {string} command
   * @param {string[]} args
   * @param {number} port
   * @param {{ env?: Record<string, string>, logName?: string, cpu?: number }} [options]
   * @returns {Promise<Server>}
   */
  async start(name, command, args, port, { env = {}, logName, cpu = 0 } = {}) {
    const [bin, argv] = pin(cpu, command, args)
    /** @type {'ignore' | import('node:stream').Writable} */
    let stdout = 'ignore'
    if (logName) {
      const [cbin, cargv] = pin(1, 'cat', [])
      const collector = spawn(cbin, cargv, { stdio: ['pipe', openSync(this.logOf(logName), 'w'), 'ignore'] })
      this.children.push(collector)
      stdout = collector.stdin
    }
    const child = spawn(bin, argv, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', stdout, 'pipe'] })
    let errors = ''
    child.stderr.on('data', (chunk) => {
      errors += chunk
    })
    this.children.push(child)
    await waitForHttp(child, name, port, () => errors)
    return { port, url: `http://127.0.0.1:${port}`, child }
  }

  /** A Node script of the bench (`node bench/SCRIPT PORT ...args`) on a free port; `node`: another Node binary. */
  async startScript(name, script, args = [], cpu = 0, node = process.execPath) {
    const port = await freePort()
    return this.start(name, node, [`bench/${script}`, String(port), ...args], port, { cpu })
  }

  /** Builds the playground (`nuxt build playground`) once a run, unless BENCH_SKIP_BUILD=1 and a build is there. */
  build() {
    return this.once('build', async () => {
      if (process.env.BENCH_SKIP_BUILD === '1' && existsSync(`${root}${GATEWAY}`)) return
      log('building playground…')
      const result = spawnSync('npx', ['nuxt', 'build', 'playground'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] })
      if (result.status !== 0) throw new Error('build of playground failed')
    })
  }

  /** The Node backend (bench/backend.mjs, CPU 1): /ping, /sink, /stream. Resolves with its URL. */
  backend() {
    return this.once('backend', async () => {
      const port = await freePort()
      const [bin, argv] = pin(1, process.execPath, [`${root}bench/backend.mjs`, String(port)])
      this.children.push(spawn(bin, argv, { stdio: 'ignore' }))
      await waitForTcp(port)
      return `http://127.0.0.1:${port}`
    })
  }

  /**
   * The backend of the throughput rows: the cheapest there is (nginx answering a constant on CPU 1), so that the
   * proxy's own cost decides; without nginx, the Node backend (the table says which).
   */
  tinyBackend() {
    return this.once('tiny', async () => {
      if (!this.tools.nginx) return this.backend()
      const port = await freePort()
      writeFileSync(`${tmp}nginx-backend.conf`, `worker_processes 1; pid ${tmp}nginx-backend.pid; daemon off; error_log ${tmp}nginx-error.log; events { worker_connections 1024; }
http { access_log off; client_body_temp_path ${tmp}; proxy_temp_path ${tmp}; keepalive_requests 1000000;
  server { listen 127.0.0.1:${port}; location / { default_type application/json; return 200 '{"ok":true}'; } } }`)
      const [bin, argv] = pin(1, 'nginx', ['-c', `${tmp}nginx-backend.conf`, '-p', tmp])
      this.children.push(spawn(bin, argv, { stdio: 'ignore' }))
      await waitForTcp(port)
      return `http://127.0.0.1:${port}`
    })
  }

  /** The development IAM, in this process. */
  iam() {
    return this.once('iam', () => startDevIam({ port: 0 }))
  }

  /** Redis holding 10,000 live revocations (processes.mjs startRevocationRedis): its URL, '' without redis-server. */
  redis() {
    return this.once('redis', async () => (this.tools.redis ? startRevocationRedis(this.children) : ''))
  }

  /**
   * A new gateway process on a free port: the playground's build with the dev IAM, a fresh secret shared by every
   * gateway of the run, the throughput backend, access log off, then `env` over that. Its stdout goes to LOGNAME.log.
   * `node`: another Node binary to run it on (the build is the same JavaScript).
   * @param {Record<string, string>} env
   * @returns {Promise<Server>}
   */
  async startGateway(name, env, logName, cpu = 0, node = process.execPath) {
    await this.build()
    const port = await freePort()
    const base = { HOST: '127.0.0.1', APP_SESSION_SECRET: this.secret, APP_AUTH_BASE_URL: (await this.iam()).url, APP_API_PROXY_TARGET: await this.tinyBackend(), APP_ACCESS_LOG: 'false' }
    return this.start(name, node, [GATEWAY], port, { env: { ...base, ...env, PORT: String(port) }, logName, cpu })
  }

  /** Access log and metrics listener on (a metrics port of its own): the gateway as observed in production. */
  async observedEnv() {
    return { APP_ACCESS_LOG: 'true', APP_METRICS_HOST: '127.0.0.1', APP_METRICS_PORT: String(await freePort()) }
  }

  /** The gateway as shipped: access log, metrics listener and Redis revocations (10,000 held) on. */
  async shippedEnv() {
    return { ...(await this.observedEnv()), APP_REDIS_URL: await this.redis() }
  }

  /** @returns {Promise<Server>} the bare gateway (access log, metrics, revocation off), shared by the scenarios */
  bareGateway() {
    return this.once('gateway:bare', () => this.startGateway('gateway /api/** bare (access log, metrics, revocation off)', {}, 'bare-gateway'))
  }

  /** A session cookie of the bare gateway (admin of the dev IAM), about 3.5 KB: the cookie every proxy gets. */
  cookie() {
    return this.once('cookie', async () => this.loginCookie((await this.bareGateway()).port))
  }

  /** Logs in through a gateway; resolves with its Set-Cookie values as one Cookie header. */
  async loginCookie(port, username = 'admin', password = 'admin123') {
    const response = await fetch(`http://127.0.0.1:${port}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) })
    if (response.status !== 200) throw new Error(`login failed: ${response.status}`)
    return response.headers.getSetCookie().map(line => line.split(';')[0]).join('; ')
  }

  /** Stops everything started: SIGTERM (nginx killed with SIGKILL leaves its workers running), SIGKILL after 1 s. */
  async close() {
    for (const child of this.children) child.kill('SIGTERM')
    if (this.started.has('iam')) await (await this.iam().catch(() => undefined))?.close?.()
    await new Promise(resolve => setTimeout(resolve, 1_000))
    for (const child of this.children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
}
