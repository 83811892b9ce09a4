import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from './gateway'

/** A reverse proxy in front of the gateway (Debian's nginx or Caddy), started from a file of deploy/. */
export interface FrontProxy {
  name: 'nginx' | 'caddy'
  /** The file of deploy/ it runs. */
  file: string
  /** http://127.0.0.1:<port>: the site as a browser reaches it. */
  url: string
  output: () => string
  stop: () => Promise<void>
}

/** Where the deploy/ file names the gateway and the protected services (every one is the test's service), and where it listens. */
export interface FrontProxyAddresses {
  gateway: string
  service: string
}

/** The nginx files of deploy/, each with what the test swaps: upstreams, listen line, and what Debian's nginx lacks. */
const NGINX_SWAPS = {
  'nginx-forward-auth.conf': (addresses: FrontProxyAddresses, port: number): Array<[string | RegExp, string]> => [
    ['server gateway:3000;', `server ${addresses.gateway};`],
    ['server grafana:3000;', `server ${addresses.service};`],
    ['listen 80;', `listen 127.0.0.1:${port};`],
  ],
  'nginx.compose.conf': (addresses: FrontProxyAddresses, port: number): Array<[string | RegExp, string]> => [
    [/server gateway-\d:3000;/g, `server ${addresses.gateway};`],
    ['listen 80;', `listen 127.0.0.1:${port};`],
  ],
  // Plain HTTP for the test (no certificate here); `http2 on` is nginx 1.25's, newer than Debian's.
  'nginx.conf': (addresses: FrontProxyAddresses, port: number): Array<[string | RegExp, string]> => [
    [/server 127\.0\.0\.1:300\d;/g, `server ${addresses.gateway};`],
    ['listen 443 ssl;', `listen 127.0.0.1:${port};`],
    [/^\s*(?:http2 on|ssl_certificate(?:_key)? +\S+);\n/gm, ''],
  ],
}

/** A file of deploy/ that nginx runs. */
export type NginxFile = keyof typeof NGINX_SWAPS

const DEPLOY = fileURLToPath(new URL('../../deploy/', import.meta.url))

/** The text of a deploy/ file, as the README shows it. */
export function deployFile(name: string): string {
  return readFileSync(join(DEPLOY, name), 'utf8')
}

/** Replaces each `from` (that must be there) by its `to`. */
function swapped(text: string, swaps: Array<[string | RegExp, string]>): string {
  for (const [from, to] of swaps) {
    if (!(typeof from === 'string' ? text.includes(from) : from.test(text))) throw new Error(`deploy file: ${String(from)} not found`)
    text = text.replaceAll(from, to)
  }
  return text
}

async function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  for (let waited = 0; waited < 10_000; waited += 50) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}: ${output()}`)
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy()
        resolve(true)
      }).on('error', () => resolve(false))
    })
    if (open) return
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  throw new Error(`did not listen on ${port} within 10 s: ${output()}`)
}

function run(name: FrontProxy['name'], file: string, command: string, args: string[], port: number, folder: string, env: Record<string, string> = {}): Promise<FrontProxy> {
  let text = ''
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
  child.stdout.on('data', chunk => text += String(chunk))
  child.stderr.on('data', chunk => text += String(chunk))
  const output = () => text
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise(resolve => child.once('exit', resolve))
      child.kill('SIGTERM')
      await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 3_000))])
      if (child.exitCode === null) child.kill('SIGKILL')
    }
    rmSync(folder, { recursive: true, force: true })
  }
  return waitForPort(port, child, output).then(
    () => ({ name, file, url: `http://127.0.0.1:${port}`, output, stop }),
    async (error: Error) => {
      await stop()
      throw new Error(`${name}: ${error.message}`)
    },
  )
}

/** Debian's nginx with a file of deploy/ (the forward-auth one unless told), its upstreams and listen line swapped for the test's. */
export async function startNginx(addresses: FrontProxyAddresses, file: NginxFile = 'nginx-forward-auth.conf'): Promise<FrontProxy> {
  const folder = mkdtempSync(join(tmpdir(), 'svc-nginx-'))
  const port = await freePort()
  const site = swapped(deployFile(file), NGINX_SWAPS[file](addresses, port))
  writeFileSync(join(folder, 'nginx.conf'), `worker_processes 1; daemon off; pid ${folder}/nginx.pid; error_log stderr warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${folder}/body; proxy_temp_path ${folder}/proxy; fastcgi_temp_path ${folder}/fastcgi;
  uwsgi_temp_path ${folder}/uwsgi; scgi_temp_path ${folder}/scgi;
${site}
}
`)
  // Debian's nginx is in /usr/sbin, which is not on every user's PATH.
  return run('nginx', file, existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx', ['-c', join(folder, 'nginx.conf'), '-p', folder, '-e', 'stderr'], port, folder)
}

/** Debian's Caddy with deploy/Caddyfile.forward-auth, its site address (plain HTTP) and upstreams swapped for the test's. */
export async function startCaddy(addresses: FrontProxyAddresses): Promise<FrontProxy> {
  const folder = mkdtempSync(join(tmpdir(), 'svc-caddy-'))
  const port = await freePort()
  const site = swapped(deployFile('Caddyfile.forward-auth'), [
    [/^app\.example\.com \{$/gm, `http://127.0.0.1:${port} {`],
    ['gateway:3000', addresses.gateway],
    ['grafana:3000', addresses.service],
    ['wiki:3000', addresses.service],
  ])
  // The test's own global options: no admin endpoint (files run side by side), no HTTPS, loopback only.
  writeFileSync(join(folder, 'Caddyfile'), `{\n\tadmin off\n\tauto_https off\n\tdefault_bind 127.0.0.1\n}\n${site}`)
  return run('caddy', 'Caddyfile.forward-auth', 'caddy', ['run', '--config', join(folder, 'Caddyfile'), '--adapter', 'caddyfile'], port, folder, { XDG_DATA_HOME: folder, XDG_CONFIG_HOME: folder, HOME: folder })
}
