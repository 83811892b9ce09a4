import { fileURLToPath } from 'node:url'
import { defineVitestProject } from '@nuxt/test-utils/config'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // Files of every project side by side: integration and browser files wait on the processes they start more than
    // they compute, and the consumer test's build and type checks take a core of their own for a minute. Each file has
    // its own ports, gateways and redis-server (test/support/stack.ts), so none can see another's.
    maxWorkers: 4,
    reporters: ['default', './test/support/phase-reporter.ts'],
    projects: [
      // A test's time limit is there for a hang, not for the machine's speed: 2 cores, often shared and loaded.
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], environment: 'node', testTimeout: 30_000 } },
      // Composables, directive and component inside the playground app (happy-dom). Its set-up builds the playground's
      // .nuxt: left out of npm test's early consumer run (SVC_TEST_CONSUMER_ONLY, test/run.mjs), which runs beside the
      // type check that reads .nuxt.
      ...process.env.SVC_TEST_CONSUMER_ONLY === '1'
        ? []
        : [await defineVitestProject({
            test: {
              name: 'nuxt',
              include: ['test/nuxt/**/*.test.ts'],
              environment: 'nuxt',
              environmentOptions: { nuxt: { rootDir: fileURLToPath(new URL('./playground', import.meta.url)), domEnvironment: 'happy-dom' } },
            },
          })],
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          setupFiles: ['test/support/clean-output.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // expect.poll ends on what it waits for; its 1 s default ceiling failed on a loaded machine.
          expect: { poll: { timeout: 10_000 } },
        },
      },
      {
        test: {
          // The packed layer installed, built and type-checked in a fresh app outside the repository (about a minute);
          // npm test runs it on its own from its start (test/run.mjs).
          name: 'consumer',
          include: ['test/consumer/**/*.test.ts'],
          environment: 'node',
          testTimeout: 600_000,
          hookTimeout: 900_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 60_000,
          expect: { poll: { timeout: 10_000 } },
        },
      },
    ],
  },
})
