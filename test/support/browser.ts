// Headless Chromium for the web app tests: Debian's `chromium` (globalSetup installs it) driven by
// playwright-core, with a fresh profile per launch. Screenshots go under .tmp/screenshots/
// (git-ignored) so a person can look at what the tests saw.
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from "playwright-core"

export const screenshotDir = join(process.cwd(), ".tmp", "screenshots")

const args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]

export interface TestBrowser {
  readonly browser: Browser
  /** A new context (its own cookies) at phone width or desktop width. */
  readonly context: (options?: { readonly phone?: boolean }) => Promise<BrowserContext>
  readonly close: () => Promise<void>
}

export const launchBrowser = async (): Promise<TestBrowser> => {
  // playwright-core's launch gives the browser a fresh temporary profile of its own.
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args, headless: true })
  return {
    browser,
    context: (options) => browser.newContext(options?.phone ? { viewport: { width: 390, height: 844 }, isMobile: true } : { viewport: { width: 1100, height: 900 } }),
    close: async () => {
      await browser.close()
    }
  }
}

/** Saves a full-page screenshot as .tmp/screenshots/<name>.png and returns its path. */
export const screenshot = async (page: Page, name: string): Promise<string> => {
  mkdirSync(screenshotDir, { recursive: true })
  const path = join(screenshotDir, `${name}.png`)
  await page.screenshot({ path, fullPage: true })
  return path
}

/** Every script error and CSP violation the page reported (a strict CSP must not be broken by our
 * own pages). Refusals the API answered (a 401 that sends a signed-out visitor to sign-in, a 400
 * the page shows as a sentence) are the page's business, not errors. */
export const collectPageErrors = (page: Page): Array<string> => {
  const errors: Array<string> = []
  page.on("console", (m) => m.type() === "error" && !/^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text()) && errors.push(m.text()))
  page.on("pageerror", (e) => errors.push(String(e)))
  return errors
}

/** Whether nothing on the page is wider than its viewport (readable at phone width: no sideways scroll). */
export const fitsWidth = (page: Page): Promise<boolean> => page.evaluate("document.documentElement.scrollWidth <= window.innerWidth") as Promise<boolean>

/** A computed style of the first element a locator finds (the stylesheet took effect). */
export const computedStyle = (locator: Locator, property: string): Promise<string> =>
  locator.first().evaluate((e, p) => (globalThis as unknown as { getComputedStyle: (e: unknown) => Record<string, string> }).getComputedStyle(e)[p]!, property)

/**
 * Waits until an expression is truthy in the page. Playwright's `waitForFunction` with a string
 * evaluates it with `eval` inside the page, which a strict CSP (`script-src 'self'`, as our pages
 * send) refuses; `page.evaluate` of a string goes through the DevTools protocol, which the CSP
 * does not govern. So poll from here.
 */
export const waitInPage = async (page: Page, expression: string, timeoutMs = 20_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await page.evaluate(`Boolean(${expression})`).catch(() => false)) return
    if (Date.now() > deadline) throw new Error(`page never satisfied: ${expression} (waited ${timeoutMs} ms)`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/**
 * Form controls on the page that a screen reader could not name: no <label> for them and no
 * aria-label (labelled pages, issue 24 point 5). Empty when every control is labelled.
 */
export const unlabelledControls = (page: Page): Promise<Array<string>> =>
  page.evaluate(`[...document.querySelectorAll("input, select, textarea, progress")]
    .filter((e) => (e.labels === undefined || e.labels === null || e.labels.length === 0) && !e.getAttribute("aria-label") && e.type !== "hidden")
    .map((e) => e.outerHTML.slice(0, 120))`) as Promise<Array<string>>
