// The live ops page (issue 26, point 1) in headless Chromium: /ops answers HTML to a browser
// (JSON to a program) under a strict CSP, shows the runners and their shards, and updates live
// from /ops/stream. The screenshot goes to .tmp/screenshots/ops-page.png (git-ignored; the README's
// docs/img/ops.png is a copy of one), so a test run never changes tracked files.
import { mkdirSync } from "node:fs"
import { chromium, type Browser } from "playwright-core"
import { join } from "node:path"
import { screenshotDir, waitInPage } from "../support/browser.ts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { startNode, type RunningNode } from "../support/node.ts"

let db: TestDatabase
let node: RunningNode
let browser: Browser

beforeAll(async () => {
  db = await createTestDatabase("opspage")
  node = await startNode(db.url)
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
  })
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await node?.stop()
  await db?.drop()
})

describe("the live /ops page", () => {
  it("answers JSON to a program and the page, with a strict CSP, to a browser", async () => {
    const json = await fetch(`${node.baseUrl}/ops`)
    expect(json.headers.get("content-type")).toContain("application/json")
    const html = await fetch(`${node.baseUrl}/ops`, { headers: { accept: "text/html,application/xhtml+xml" } })
    expect(html.headers.get("content-type")).toContain("text/html")
    expect(html.headers.get("content-security-policy")).toContain("script-src 'self'")
    expect(await html.text()).not.toMatch(/<script>(?!<\/script>)|<script(?![^>]*src=)[^>]*>/)
  })

  it("shows runners and their shards, and updates live over SSE", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1100 } })
    const problems: Array<string> = []
    // A CSP refusal or a script error shows as a console error; a failed load as a response (the
    // browser's own favicon request is the listener's 404 and not the page's).
    page.on("console", (m) => { if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) problems.push(m.text()) })
    page.on("response", (r) => { if (r.status() >= 400 && !r.url().endsWith("/favicon.ico")) problems.push(`${r.status()} ${r.url()}`) })
    page.on("pageerror", (e) => problems.push(e.message))
    await page.goto(`${node.baseUrl}/ops`)
    await waitInPage(page, `/healthy/.test(document.querySelector("#runners table")?.textContent ?? "")`)
    expect(await page.textContent("#runners")).toContain("healthy")
    await waitInPage(page, `/300/.test(document.querySelector("#shards")?.textContent ?? "")`)
    expect(await page.textContent("#shards")).toContain("shardline:embedded")
    const first = Number(await page.getAttribute("#samples", "data-seq"))
    await waitInPage(page, `Number(document.querySelector("#samples")?.getAttribute("data-seq")) >= ${first + 2}`)
    expect(await page.locator("#chart-shards svg polyline").count()).toBeGreaterThan(0)
    expect(await page.textContent("#entities")).toMatch(/Market/)
    expect(await page.textContent("#conn")).toBe("live")
    expect(problems).toEqual([])
    mkdirSync(screenshotDir, { recursive: true })
    await page.screenshot({ path: join(screenshotDir, "ops-page.png"), fullPage: true })
    await page.close()
  })
})
