// The social web app in a real browser (issue 24): headless Chromium signs in by the QR flow while
// the test plays the wallet (BIP-137 over the challenge's message), publishes a post with a media
// file through the composer (upload progress, then the proof), opens the post page; and the
// failure paths: an expired challenge, a revoked session. Screenshots in .tmp/screenshots/.
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { configLayer } from "../../src/config.ts"
import { pgClientLayer } from "../support/pg.ts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { createAccount } from "../../src/social/accounts/Accounts.ts"
import { collectPageErrors, launchBrowser, screenshot, type TestBrowser } from "../support/browser.ts"
import { makeWallet } from "../support/linkWallet.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { awaitSignInReady, signInPage, walletFromWif } from "../support/walletSignIn.ts"

let db: TestDatabase
let node: RunningNode
let browser: TestBrowser

beforeAll(async () => {
  db = await createTestDatabase("webapp_social")
  ;[node, browser] = await Promise.all([startNode(db.url, { SHARDLINE_MESSAGE_POLL_MS: "200" }), launchBrowser()])
  await awaitSignInReady(node.socialUrl)
}, 150_000)
afterAll(async () => {
  await browser?.close()
  await node?.stop()
  await db?.drop()
})

const inNode = <A, E>(effect: Effect.Effect<A, E, any>) =>
  node.run(Effect.scoped(Effect.provide(effect, Layer.merge(pgClientLayer(db.url), configLayer(node.config)))) as Effect.Effect<A, E, never>)
const sql = (text: string) => inNode(Effect.flatMap(SqlClient.SqlClient, (s) => s.unsafe(text)))
/** A 1×1 PNG. */
const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64")

describe("social web app", () => {
  it("signs in with the wallet, publishes a post with a media file, shows the proof and opens the post page", { timeout: 60_000 }, async () => {
    const account = await inNode(createAccount("webapp_alice"))
    const context = await browser.context()
    const page = await context.newPage()
    const errors = collectPageErrors(page)
    await signInPage(page, node.socialUrl, walletFromWif(account.wif))
    await expect.poll(() => page.locator("h1").textContent()).toBe("@webapp_alice")
    expect(await page.locator(".who").textContent()).toBe(account.address)

    await page.getByLabel("What is new?").fill("Hello from the browser")
    await page.getByLabel("Tags").fill("webapp, test")
    await page.getByLabel("Media").setInputFiles({ name: "dot.png", mimeType: "image/png", buffer: png })
    await screenshot(page, "social-composer")
    await page.getByRole("button", { name: "Publish" }).click()
    const proof = page.locator("#proof")
    await proof.waitFor({ timeout: 20_000 })
    expect(await page.locator("progress").getAttribute("value")).toBe("1")
    const txHash = await proof.locator("[data-field=txHash]").textContent()
    expect(txHash).toMatch(/^[0-9a-f]{64}$/)
    expect(await proof.locator("[data-field=opReturn]").textContent()).toMatch(/\|/)
    // The member's posts list shows it with its hosting state.
    await expect.poll(() => page.locator("[data-post]").count()).toBe(1)
    expect(await page.locator("[data-post]").textContent()).toContain("hosted")
    await screenshot(page, "social-app")

    await proof.locator("[data-link=page]").click()
    await page.waitForURL(/\/p\//)
    expect(await page.content()).toContain("Hello from the browser")
    expect(await page.locator(`img[src*="/api/stream/"]`).count()).toBe(1)
    await screenshot(page, "social-post-page")
    expect(errors).toEqual([])
    await context.close()
  })

  it("shows an expired challenge as a sentence with a way to start again", { timeout: 30_000 }, async () => {
    const context = await browser.context({ phone: true })
    const page = await context.newPage()
    await page.goto(`${node.socialUrl}/app/sign-in`)
    const id = await page.locator("[data-challenge]").getAttribute("data-challenge")
    expect(await page.locator(".qr svg").count()).toBe(1)
    expect(await page.getByRole("link", { name: "Open in wallet" }).getAttribute("href")).toMatch(/^shardline-wallet:\/\/login\?envelope=/)
    await screenshot(page, "social-sign-in-phone")
    await sql(`UPDATE signin_challenges SET expires_at = now() - interval '1 second' WHERE id = '${id}'`)
    await page.getByText("This sign-in code has expired").waitFor({ timeout: 10_000 })
    await page.getByRole("button", { name: "Get a new code" }).click()
    await expect.poll(() => page.locator("[data-challenge]").getAttribute("data-challenge")).not.toBe(id)
    await context.close()
  })

  it("sends a revoked session back to sign-in", { timeout: 30_000 }, async () => {
    const wallet = makeWallet()
    const context = await browser.context()
    const page = await context.newPage()
    await signInPage(page, node.socialUrl, wallet)
    await page.locator(".who").waitFor()
    await sql(`UPDATE web_sessions SET revoked_at = now() WHERE address = '${wallet.addresses.p2pkh}'`)
    // Every node's cache drops a revoked session within 2 s.
    await expect.poll(async () => {
      await page.goto(`${node.socialUrl}/app/`)
      await page.waitForLoadState("networkidle")
      return new URL(page.url()).pathname
    }, { timeout: 10_000 }).toBe("/app/sign-in")
    await context.close()
  })
})
