import { writeFileSync } from 'node:fs'
import type { Reporter, TestModule } from 'vitest/node'

/** The phase each vitest project belongs to in `npm test`'s summary (test/run.mjs). */
const PHASE_OF: Record<string, string> = { unit: 'unit', nuxt: 'unit', integration: 'integration', e2e: 'browser', consumer: 'consumer' }

export interface PhaseTimes {
  /** Per phase: wall time from its first file's start to its last file's end (phases run side by side). */
  phases: Record<string, { startedAt: number, endedAt: number, files: number, passed: number, failed: number, skipped: number }>
  passed: number
  failed: number
  skipped: number
}

/**
 * A reporter that only records: when each phase's files started and ended and how their tests went, written as JSON to
 * the file named by SVC_TEST_PHASES (nothing without it), for the summary `npm test` prints at its end.
 */
export default class PhaseReporter implements Reporter {
  private readonly times: PhaseTimes = { phases: {}, passed: 0, failed: 0, skipped: 0 }

  onTestModuleStart(module: TestModule): void {
    const phase = this.phaseOf(module)
    phase.startedAt = Math.min(phase.startedAt, Date.now())
  }

  onTestModuleEnd(module: TestModule): void {
    const phase = this.phaseOf(module)
    phase.endedAt = Math.max(phase.endedAt, Date.now())
    phase.files++
    for (const test of module.children.allTests()) {
      const state = test.result().state
      const key = state === 'passed' ? 'passed' : state === 'failed' ? 'failed' : 'skipped'
      phase[key]++
      this.times[key]++
    }
    // A file whose hooks failed has failed, whatever its tests say.
    if (module.state() === 'failed' && ![...module.children.allTests()].some(test => test.result().state === 'failed')) {
      phase.failed++
      this.times.failed++
    }
  }

  onTestRunEnd(): void {
    const file = process.env.SVC_TEST_PHASES
    if (file) writeFileSync(file, JSON.stringify(this.times))
  }

  private phaseOf(module: TestModule) {
    const name = PHASE_OF[module.project.name] ?? module.project.name
    this.times.phases[name] ??= { startedAt: Infinity, endedAt: 0, files: 0, passed: 0, failed: 0, skipped: 0 }
    return this.times.phases[name]
  }
}
