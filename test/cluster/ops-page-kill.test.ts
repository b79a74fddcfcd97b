// Issue 26 ("Done when"): a person watching /ops in a browser sees a kill -9 happen without reading
// JSON. Three runner processes on one Postgres; Chromium keeps node 1's /ops open (fed by its SSE
// stream); node 3 is killed -9. The page, with no reload, must show node 3's runner `gone` and its
// shards taken by the two survivors (300 between them), and the stream keeps coming.
// Its screenshot goes to .tmp/screenshots/ops-kill.png (the README's docs/img/ops-kill.png is a copy).
import { mkdirSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { spawnNode, type NodeProcess } from "../../harness/nodeProcess.ts"
import { join } from "node:path"
import { launchBrowser, screenshotDir, waitInPage, type TestBrowser } from "../support/browser.ts"
import { testMasterKey } from "../support/node.ts"

let db: TestDatabase
let browser: TestBrowser
const nodes: Array<NodeProcess> = []

beforeAll(async () => {
  db = await createTestDatabase("ops_kill")
  const vars = { SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey }
  // The first node runs the migrations alone; the other two start together.
  nodes.push(await spawnNode(vars))
  const [rest, launched] = await Promise.all([Promise.all([spawnNode(vars), spawnNode(vars)]), launchBrowser()])
  nodes.push(...rest)
  browser = launched
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await Promise.all(nodes.map((n) => n.dispose()))
  await db?.drop()
})

/** The page's shard table as node → shards (the rows the SSE stream last drew). */
const shardRows = async (page: import("playwright-core").Page): Promise<Record<string, number>> =>
  Object.fromEntries(await page.evaluate(`[...document.querySelectorAll("#shards tr")].filter((r) => r.cells[0].tagName === "TD")
    .map((r) => [r.cells[0].textContent, Number(r.cells[2].textContent)])`) as Array<[string, number]>)

describe("the /ops page during a kill -9", () => {
  it("shows the killed runner gone and its shards on the survivors, live, with no reload", { timeout: 120_000 }, async () => {
    const [first, , victim] = nodes as [NodeProcess, NodeProcess, NodeProcess]
    const context = await browser.context()
    const page = await context.newPage()
    await page.setViewportSize({ width: 1400, height: 1100 })
    const problems: Array<string> = []
    page.on("pageerror", (e) => problems.push(e.message))
    await page.goto(`${first.baseUrl}/ops`)
    // Three healthy runners sharing the shards.
    await waitInPage(page, `document.querySelectorAll("#runners [data-state=healthy]").length === 3`, 60_000)
    await waitInPage(page, `document.querySelectorAll("#shards td:first-child").length === 3`, 60_000)
    expect(Object.keys(await shardRows(page)).sort()).toEqual(nodes.map((n) => n.name).sort())
    const before = Number(await page.getAttribute("#samples", "data-seq"))

    victim.child.kill("SIGKILL")
    const killedAt = Date.now()

    // Gone from the ring: its heartbeat older than the lock expiration, marked on the page.
    await waitInPage(page, `document.querySelectorAll("#runners [data-state=gone]").length === 1`, 60_000)
    expect(await page.locator("#runners [data-state=healthy]").count()).toBe(2)
    // Its shards on the two survivors, all 300, without a reload.
    // The dead owner's row goes first; its shards then arrive on the survivors over a few polls.
    await waitInPage(page, `(() => {
      const rows = [...document.querySelectorAll("#shards tr")].filter((r) => r.cells[0].tagName === "TD")
      return rows.length === 2 && rows.reduce((n, r) => n + Number(r.cells[2].textContent), 0) === 300
    })()`, 60_000)
    const owners = await shardRows(page)
    expect(Object.keys(owners)).not.toContain(victim.name)
    expect(Object.values(owners).reduce((a, b) => a + b, 0)).toBe(300)
    // The stream kept coming (samples after the kill), and nothing on the page failed.
    expect(Number(await page.getAttribute("#samples", "data-seq"))).toBeGreaterThan(before)
    expect(await page.textContent("#conn")).toBe("live")
    expect(problems).toEqual([])
    console.log(`OPS_KILL_SEEN_MS=${Date.now() - killedAt}`)
    mkdirSync(screenshotDir, { recursive: true })
    await page.screenshot({ path: join(screenshotDir, "ops-kill.png"), fullPage: true })
    await context.close()
  })
})
