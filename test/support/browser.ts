import { mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import { useStack, type Stack, type StackOptions } from './stack'

const SCREENSHOTS = fileURLToPath(new URL('../e2e/screenshots/', import.meta.url))

/**
 * Saves a screenshot of `page` as `test/e2e/screenshots/<name>.png` when `SVC_SCREENSHOTS=1`, for a person to look
 * at; nothing otherwise. No test reads them, and full-page captures were most of the small-screens file's time
 * (125 s with them, 46 s without, the same 32 checks of layout and contrast, on this 2-core machine).
 */
export async function saveScreenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  if (process.env.SVC_SCREENSHOTS !== '1') return
  mkdirSync(SCREENSHOTS, { recursive: true })
  await page.screenshot({ path: `${SCREENSHOTS}${name}.png`, ...options })
}

/**
 * Debian's Chromium, headless, with the flags this machine needs (and `extraArgs`, for example
 * `--host-resolver-rules=MAP staging.test 127.0.0.1`); never a downloaded browser. Its headless build
 * (`chromium-headless-shell`, the same engine and version as the `chromium` package, and what Playwright itself runs
 * for headless): the full browser's binary spent 58 CPU-s on login-flow.test.ts's 27 tests against 13 for it, and 241
 * CPU-s of npm test against 78 (docs/development.md). `CHROMIUM_PATH=/usr/bin/chromium` runs the tests in the full browser.
 */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium-headless-shell',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', ...extraArgs],
  })
}

/** The whole demo stack for a browser test file: development IAM, sample backend, the built gateway, Chromium. */
export interface BrowserStack extends Stack, Chromium {}

/** Chromium for a test file (started before its tests, closed after them) and a fresh context for each test. */
export interface Chromium {
  browser: Browser
  /** A fresh browser context for each test (1280 × 800, vi-VN), closed after it. */
  context: BrowserContext
}

/** Registers the hooks of a file's Chromium and its per-test contexts; read `browser` and `context` inside tests. */
export function useChromium(): Chromium {
  const chromium = { browser: undefined as Browser | undefined, context: undefined as BrowserContext | undefined }
  beforeAll(async () => {
    chromium.browser = await launchChromium()
  })
  afterAll(async () => {
    await chromium.browser?.close()
  })
  beforeEach(async () => {
    chromium.context = await chromium.browser!.newContext({ viewport: { width: 1280, height: 800 }, locale: 'vi-VN' })
  })
  afterEach(async () => {
    await chromium.context?.close()
  })
  return chromium as Chromium
}

/**
 * The harness's stack (test/support/stack.ts) with the sample backend and a gateway, plus Chromium (useChromium),
 * started before the file's tests and stopped after them; a fresh browser context per test (`stack.context`).
 */
export function useBrowserStack(options: StackOptions = {}): BrowserStack {
  const stack = useStack({ backend: 'sample', gateway: {}, ...options })
  const chromium = useChromium()
  return Object.defineProperties(stack, {
    browser: { get: () => chromium.browser, enumerable: true },
    context: { get: () => chromium.context, enumerable: true },
  }) as BrowserStack
}

/**
 * Waits until the page's Vue app is mounted (hydrated). A page loaded whole (as after a login) shows its buttons
 * before that; a click then reaches no handler, and on a loaded machine a test can be that quick.
 */
export async function waitForHydration(page: Page): Promise<void> {
  await page.waitForFunction(() => !!(document.querySelector('#__nuxt') as { __vue_app__?: unknown } | null)?.__vue_app__)
}

/**
 * Logs in through the login page as a user would: opens `from` on the gateway at `base` (a protected page sends the
 * browser to the login page), fills the form once it is hydrated, submits, and waits to land on `to`, hydrated.
 */
export async function logInThroughPage(page: Page, base: string, username: string, password: string, from = '/', to = from): Promise<void> {
  await page.goto(base + from)
  await page.locator('button[type=submit]:not([disabled])').waitFor()
  await page.getByLabel('Tên đăng nhập').fill(username)
  await page.getByLabel('Mật khẩu').fill(password)
  await page.getByRole('button', { name: 'Đăng nhập', exact: true }).click()
  await page.waitForURL(base + to)
  await waitForHydration(page)
}

let axeSource: string | undefined

/**
 * axe-core's violations of the page as it is now (the rules of `runOnly`, else all), one line each: impact, rule, help
 * and where. axe-core is injected from its package (a devDependency), never fetched.
 */
export async function axeViolations(page: Page, runOnly?: string[]): Promise<string[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
  await page.addScriptTag({ content: axeSource })
  type Violation = { id: string, impact: string | null, help: string, nodes: Array<{ target: string[] }> }
  type Axe = { run: (context: Document, options: object) => Promise<{ violations: Violation[] }> }
  const found = await page.evaluate(async rules => (await (window as unknown as { axe: Axe }).axe.run(document, rules ? { runOnly: rules } : {})).violations, runOnly)
  return found.map(v => `${v.impact}: ${v.id} (${v.help}) at ${v.nodes.map(n => n.target.join(' ')).join(', ')}`)
}
