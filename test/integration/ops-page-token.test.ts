// A person opens the live /ops page in a browser on a node with SHARDLINE_OPS_TOKEN (issue 26):
// without the token the browser gets a 401 page saying how; `/ops?token=…` once sets an HttpOnly,
// SameSite=Strict cookie for /ops only and sends the browser back to /ops without the token in the
// address, where the live page runs (its stream too). A wrong token sets nothing, and the cookie
// never opens /metrics. Headless Chromium (Debian's), as the other page tests.
import { chromium, type Browser } from "playwright-core"
import { waitInPage } from "../support/browser.ts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { startNode, type RunningNode } from "../support/node.ts"

const token = "ops-page-token-0123456789abcdef"

let db: TestDatabase
let node: RunningNode
let browser: Browser

beforeAll(async () => {
  db = await createTestDatabase("opspagetoken")
  node = await startNode(db.url, { SHARDLINE_OPS_TOKEN: token })
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

describe("the /ops page on a node with an ops token", () => {
  it("answers a browser without the token with a 401 page that says how to open it", async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const res = await page.goto(`${node.baseUrl}/ops`)
    expect(res?.status()).toBe(401)
    expect(await page.textContent("#token-needed")).toContain("This node requires its ops token")
    expect(await page.textContent("#token-needed")).toContain("/ops?token=")
    expect(await page.locator("#runners").count()).toBe(0)
    // A wrong token: 401 again, and nothing remembered.
    const wrong = await page.goto(`${node.baseUrl}/ops?token=not-${token}`)
    expect(wrong?.status()).toBe(401)
    expect(await page.textContent("#token-needed")).toContain("not this node's")
    expect(await context.cookies()).toEqual([])
    // Programs still get the listener's JSON 401.
    expect((await fetch(`${node.baseUrl}/ops`)).status).toBe(401)
    await context.close()
  })

  it("/ops?token=… sets the cookie, leaves the token out of the address, and the live page runs", async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } })
    const page = await context.newPage()
    const problems: Array<string> = []
    page.on("pageerror", (e) => problems.push(e.message))
    page.on("response", (r) => { if (r.status() >= 400 && !r.url().endsWith("/favicon.ico")) problems.push(`${r.status()} ${r.url()}`) })
    const res = await page.goto(`${node.baseUrl}/ops?token=${token}`)
    expect(res?.status()).toBe(200)
    expect(page.url()).toBe(`${node.baseUrl}/ops`)
    const cookies = await context.cookies()
    expect(cookies).toHaveLength(1)
    expect(cookies[0]).toMatchObject({ name: "shardline_ops", path: "/ops", httpOnly: true, sameSite: "Strict", expires: -1 })
    expect(cookies[0]!.value).not.toContain(token)
    // The live page, fed by its stream (which the cookie opens too).
    await waitInPage(page, `/healthy/.test(document.querySelector("#runners table")?.textContent ?? "")`)
    await waitInPage(page, `/300/.test(document.querySelector("#shards")?.textContent ?? "")`)
    expect(await page.textContent("#access")).toBe("full view")
    await waitInPage(page, `document.querySelector("#conn")?.textContent === "live"`)
    // The page's script cannot read the cookie (HttpOnly).
    expect(await page.evaluate("document.cookie")).toBe("")
    // A reload keeps it open; /metrics is not opened by it.
    expect((await page.reload())?.status()).toBe(200)
    expect((await page.goto(`${node.baseUrl}/metrics`))?.status()).toBe(401)
    const cookie = `shardline_ops=${cookies[0]!.value}`
    expect((await fetch(`${node.baseUrl}/metrics`, { headers: { cookie } })).status).toBe(401)
    expect((await fetch(`${node.baseUrl}/ops`, { headers: { cookie } })).status).toBe(200)
    expect(problems.filter((p) => !p.endsWith("/metrics"))).toEqual([])
    await context.close()
  })

  it("the sign-in answer is a 303 to /ops with the cookie's attributes and no referrer", async () => {
    const res = await fetch(`${node.baseUrl}/ops?token=${token}`, { redirect: "manual" })
    expect(res.status).toBe(303)
    expect(res.headers.get("location")).toBe("/ops")
    expect(res.headers.get("referrer-policy")).toBe("no-referrer")
    expect(res.headers.get("set-cookie")).toMatch(/^shardline_ops=[A-Za-z0-9_-]+; Path=\/ops; HttpOnly; SameSite=Strict$/)
    const stream = await fetch(`${node.baseUrl}/ops/stream`, { headers: { cookie: "shardline_ops=forged" } })
    expect(stream.status).toBe(401)
    await stream.body?.cancel()
  })
})
