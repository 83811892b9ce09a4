import { chromium, type LaunchOptions } from 'playwright-core'
import type { TestProject } from 'vitest/node'

/**
 * Debian's Chromium, headless, with the flags this machine needs (and `extraArgs`, for example
 * `--host-resolver-rules=MAP staging.test 127.0.0.1`); never a downloaded browser.
 */
export function chromiumOptions(extraArgs: string[] = []): LaunchOptions {
  return {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', ...extraArgs],
  }
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The browser files' shared Chromium (its Playwright server's WebSocket address). */
    chromiumEndpoint: string
  }
}

/**
 * The browser project's global set-up: one Chromium for all its files, which connect to it (browser.ts useChromium)
 * and each test opens a context of its own in; launched once rather than once a file (about 1.7 CPU-s each, on two
 * cores shared with every other test).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await chromium.launchServer(chromiumOptions())
  project.provide('chromiumEndpoint', server.wsEndpoint())
  return () => server.close()
}
