import { mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type BrowserContext } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import { startSampleBackend } from '../../dev/backend.mjs'
import { startDevIam } from '../../dev/iam.mjs'
import { startGateway, type RunningGateway } from './gateway'

export const SCREENSHOTS = fileURLToPath(new URL('../e2e/screenshots/', import.meta.url))

/** Debian's Chromium, headless, with the flags this machine needs; never a downloaded browser. */
export async function launchChromium(): Promise<Browser> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  })
}

/** The whole demo stack for a browser test file: development IAM, sample backend, the built gateway, Chromium. */
export interface BrowserStack {
  iam: Awaited<ReturnType<typeof startDevIam>>
  backend: Awaited<ReturnType<typeof startSampleBackend>>
  gateway: RunningGateway
  browser: Browser
}

/**
 * Starts the stack before the file's tests and stops it after them; a fresh browser context per test
 * (`stack.context`), closed after it.
 */
export function useBrowserStack(): BrowserStack & { context: BrowserContext } {
  const stack = {} as BrowserStack & { context: BrowserContext }
  beforeAll(async () => {
    stack.iam = await startDevIam()
    stack.backend = await startSampleBackend({ iamUrl: stack.iam.url })
    stack.gateway = await startGateway({ APP_AUTH_BASE_URL: stack.iam.url, APP_API_PROXY_TARGET: stack.backend.url })
    stack.browser = await launchChromium()
  })
  afterAll(async () => {
    await stack.browser?.close()
    await stack.gateway?.stop()
    await stack.backend?.close()
    await stack.iam?.close()
  })
  beforeEach(async () => {
    stack.context = await stack.browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'vi-VN' })
  })
  afterEach(async () => {
    await stack.context?.close()
  })
  return stack
}
