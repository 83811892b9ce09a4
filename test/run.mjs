// @ts-check
/**
 * `npm test`: the whole suite, in the order its parts need, as fast as two cores allow:
 *   1. lint and the layering of server/ (dependency-cruiser: docs/architecture.md), beside the type check of the
 *      playground (after `nuxt prepare`, which the type check needs); and from the start beside them, the consumer
 *      test (its own vitest run: it packs the layer and builds an app of its own, and needs neither the checks nor
 *      the playground's build; its npm install fills the time the checks leave a core idle);
 *   2. the playground's build (the integration and browser tests start it);
 *   3. every other vitest project in one run, files side by side (unit and components, integration, browser).
 * It ends with one line per phase and its wall time, then the test counts. Exit code: 0 only when every phase passed.
 * Arguments are handed to vitest, which then runs every project in step 3 (`npm test -- test/integration/limiter.test.ts`).
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const bin = name => join(root, 'node_modules/.bin', name)

/** @type {Array<{ name: string, seconds: number, ok: boolean, note?: string }>} */
const summary = []

/**
 * Runs one command; `quiet` keeps its output until it ends (for commands that run side by side), printed then, or
 * when `quiet` is a promise, once that has settled (a run that would otherwise print into another's live output).
 * @param {string} name
 * @param {string} command
 * @param {string[]} args
 * @param {{ quiet?: boolean | Promise<unknown>, env?: Record<string, string> }} [options]
 * @returns {Promise<boolean>}
 */
function run(name, command, args, options = {}) {
  const started = performance.now()
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', options.quiet ? 'pipe' : 'inherit', options.quiet ? 'pipe' : 'inherit'], env: { ...process.env, ...options.env } })
    let output = ''
    child.stdout?.on('data', (chunk) => {
      output += chunk
    })
    child.stderr?.on('data', (chunk) => {
      output += chunk
    })
    child.on('close', async (code, signal) => {
      const ok = code === 0
      const seconds = (performance.now() - started) / 1000
      if (options.quiet instanceof Promise) await options.quiet.catch(() => undefined)
      if (options.quiet) process.stdout.write(`\n── ${name} (${command} ${args.join(' ')}) ──\n${output}`)
      summary.push({ name, seconds, ok, ...(ok ? {} : { note: `exit ${code ?? signal}` }) })
      resolve(ok)
    })
  })
}

/** Prints the phase lines and the counts; exits with the suite's verdict. */
function finish(/** @type {{ passed: number, failed: number, skipped: number } | undefined} */ counts, started) {
  const width = Math.max(...summary.map(phase => phase.name.length))
  process.stdout.write('\nnpm test, phase by phase (wall time; unit, integration, browser and consumer run side by side):\n')
  for (const phase of summary) {
    process.stdout.write(`  ${phase.name.padEnd(width)}  ${phase.seconds.toFixed(1).padStart(6)} s  ${phase.ok ? 'ok' : 'FAILED'}${phase.note ? ` (${phase.note})` : ''}\n`)
  }
  process.stdout.write(`  ${'total'.padEnd(width)}  ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s\n`)
  if (counts) process.stdout.write(`tests: ${counts.passed} passed, ${counts.failed} failed${counts.skipped ? `, ${counts.skipped} skipped` : ''}\n`)
  process.exit(summary.every(phase => phase.ok) ? 0 : 1)
}

const started = performance.now()
const scratch = mkdtempSync(join(tmpdir(), 'svc-test-'))
const vitestArgs = process.argv.slice(2)
/** Settles once the main vitest run has printed all it prints (the consumer's output waits for it). */
let mainDone = () => {}
const mainPrinted = new Promise((resolve) => {
  mainDone = resolve
})
// No arguments: the consumer project runs alone from the start (SVC_TEST_CONSUMER_ONLY: vitest.config.ts then leaves
// out the nuxt project, whose set-up writes playground/.nuxt while the type check reads it).
const consumerPhasesFile = join(scratch, 'consumer-phases.json')
const consumer = vitestArgs.length
  ? undefined
  : run('consumer', bin('vitest'), ['run', '--project', 'consumer'], { quiet: mainPrinted, env: { SVC_TEST_PHASES: consumerPhasesFile, SVC_TEST_CONSUMER_ONLY: '1' } })
const checked = await Promise.all([
  run('lint', bin('eslint'), ['.'], { quiet: true }),
  run('layers', bin('depcruise'), ['server', '--config', '.dependency-cruiser.cjs'], { quiet: true }),
  run('prepare', bin('nuxt'), ['prepare', 'playground'], { quiet: true })
    .then(ok => ok && run('typecheck', bin('nuxt'), ['typecheck', 'playground'], { quiet: true })),
])
if (!checked.every(Boolean) || !await run('build', bin('nuxt'), ['build', 'playground'])) {
  mainDone()
  await consumer
  rmSync(scratch, { recursive: true, force: true })
  finish(undefined, started)
}

const phasesFile = join(scratch, 'phases.json')
const vitestStarted = performance.now()
const projects = consumer ? ['unit', 'nuxt', 'integration', 'e2e'].flatMap(project => ['--project', project]) : []
const passed = await run('vitest', bin('vitest'), ['run', ...projects, ...vitestArgs], { env: { SVC_TEST_PHASES: phasesFile } })
summary.pop()
mainDone()
const consumerPassed = await consumer
// The consumer run's own line goes; its phase line comes from its report below, as the others' do.
if (consumer) summary.splice(summary.findIndex(phase => phase.name === 'consumer'), 1)

/** @returns {import('./support/phase-reporter').PhaseTimes | undefined} */
function readPhases(/** @type {string} */ file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'))
  }
  catch {
    return undefined
  }
}
const reports = [readPhases(phasesFile), ...(consumer ? [readPhases(consumerPhasesFile)] : [])]
if (reports.some(report => !report)) summary.push({ name: 'vitest', seconds: (performance.now() - vitestStarted) / 1000, ok: false, note: 'no test report' })
rmSync(scratch, { recursive: true, force: true })
/** @type {import('./support/phase-reporter').PhaseTimes | undefined} */
const times = reports.every(Boolean)
  ? {
      phases: Object.assign({}, ...reports.map(report => report?.phases)),
      passed: reports.reduce((sum, report) => sum + (report?.passed ?? 0), 0),
      failed: reports.reduce((sum, report) => sum + (report?.failed ?? 0), 0),
      skipped: reports.reduce((sum, report) => sum + (report?.skipped ?? 0), 0),
    }
  : undefined
for (const name of ['unit', 'integration', 'browser', 'consumer']) {
  const phase = times?.phases[name]
  if (!phase) continue
  summary.push({ name, seconds: (phase.endedAt - phase.startedAt) / 1000, ok: phase.failed === 0, note: `${phase.files} files, ${phase.passed} tests passed${phase.failed ? `, ${phase.failed} failed` : ''}` })
}
if (times && !passed) summary.push({ name: 'vitest', seconds: (performance.now() - vitestStarted) / 1000, ok: false, note: 'the run failed (see above)' })
if (times && consumer && !consumerPassed) summary.push({ name: 'vitest (consumer)', seconds: (performance.now() - started) / 1000, ok: false, note: 'the run failed (see above)' })
finish(times, started)
