// @ts-check
/**
 * The runtime matrix `.ci/run` runs after its main suite (`npm test` and the soak on the newest Node LTS): each Node LTS
 * line package.json's `engines` admits, installed from the npm registry with npm 11 beside it (.ci/runtime.mjs; the
 * machine's own Node is never replaced), builds the playground with that Node and runs the unit and integration
 * projects on it, then the consumer test (the packed layer in a fresh app: install with no warning about the layer,
 * build, login, /api, typecheck, the Dockerfile's build stage) with the newest Nuxt 4.x. The line the main suite ran on
 * (MATRIX_SUITE_NODE, set by .ci/run) runs only the consumer test with the newest Nuxt: the rest ran in `npm test`. One
 * line per cell with its result and time; exit code 1 when any cell is red.
 * MATRIX_NODES ('22 24') picks the majors; MATRIX_CONSUMER_NUXT ('^4') the consumer app's Nuxt.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { installRuntime, supportedMajors } from './runtime.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const majors = (process.env.MATRIX_NODES ?? supportedMajors().join(' ')).split(/\s+/).filter(Boolean)
const suiteMajor = process.env.MATRIX_SUITE_NODE
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

/** @type {Array<{ cell: string, ok: boolean, seconds: number, note: string }>} */
const lines = []

for (const major of majors) {
  const started = performance.now()
  let ok = false
  let note = ''
  try {
    const runtime = await installRuntime(major)
    const { node, version } = runtime
    note = version
    // The consumer's Nuxt, resolved once (the newest version in the range), so the line names the version that ran.
    const resolved = (await run('npm', ['view', `nuxt@${consumerRange}`, 'version', '--json'])).stdout.match(/"(\d+\.\d+\.\d+)"\s*\]?\s*$/)?.[1]
    // Unresolved (no registry): the range goes to the app as it is, and the line says so.
    const consumerNuxt = resolved ?? `${consumerRange} (unresolved)`
    const steps = [
      ['build', [join(root, 'node_modules/nuxt/bin/nuxt.mjs'), 'build', 'playground'], {}],
      ['unit + integration', [join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--project', 'unit', '--project', 'integration'], {}],
      // On the newest line, the consumer test also builds the app's image as the Dockerfile says (npm test leaves it out).
      [`consumer, nuxt ${consumerNuxt}`, [join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--project', 'consumer'], { SVC_CONSUMER_NUXT: resolved ?? consumerRange, ...(Number(major) === Math.max(...supportedMajors()) ? { SVC_CONSUMER_IMAGE: '1' } : {}) }],
    ].slice(major === suiteMajor ? 2 : 0)
    if (major === suiteMajor) note += '; build, unit, integration and consumer with the repository\'s Nuxt: npm test'
    ok = true
    for (const [name, args, env] of /** @type {Array<[string, string[], Record<string, string>]>} */ (steps)) {
      // This Node and its npm first on PATH, for whatever a step starts by name.
      const step = await run(node, args, { ...runtime.env, ...env })
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
