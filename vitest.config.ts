import { fileURLToPath } from 'node:url'
import { defineVitestProject } from '@nuxt/test-utils/config'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], environment: 'node' } },
      // Composables, directive and component inside the playground app (happy-dom).
      await defineVitestProject({
        test: {
          name: 'nuxt',
          include: ['test/nuxt/**/*.test.ts'],
          environment: 'nuxt',
          environmentOptions: { nuxt: { rootDir: fileURLToPath(new URL('./playground', import.meta.url)), domEnvironment: 'happy-dom' } },
        },
      }),
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          setupFiles: ['test/helpers/clean-stderr.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // 2 cores: the built gateway, the dev IAM and the backends of one file at a time.
          fileParallelism: false,
        },
      },
      {
        test: {
          // The packed layer installed, built and type-checked in a fresh app outside the repository (several minutes).
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
          fileParallelism: false,
        },
      },
    ],
  },
})
