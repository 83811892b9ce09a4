import { mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type BrowserContext } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import { useStack, type Stack, type StackOptions } from './stack'

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
export interface BrowserStack extends Stack {
  browser: Browser
  /** A fresh browser context for each test, closed after it. */
  context: BrowserContext
}

/**
 * The harness's stack (test/support/stack.ts) with the sample backend and a gateway, plus Chromium, started before the
 * file's tests and stopped after them; a fresh browser context per test (`stack.context`), closed after it.
 */
export function useBrowserStack(options: StackOptions = {}): BrowserStack {
  const stack = useStack({ backend: 'sample', gateway: {}, ...options })
  const browser = { browser: undefined as Browser | undefined, context: undefined as BrowserContext | undefined }
  beforeAll(async () => {
    browser.browser = await launchChromium()
  })
  afterAll(async () => {
    await browser.browser?.close()
  })
  beforeEach(async () => {
    browser.context = await browser.browser!.newContext({ viewport: { width: 1280, height: 800 }, locale: 'vi-VN' })
  })
  afterEach(async () => {
    await browser.context?.close()
  })
  return Object.defineProperties(stack, {
    browser: { get: () => browser.browser, enumerable: true },
    context: { get: () => browser.context, enumerable: true },
  }) as BrowserStack
}
