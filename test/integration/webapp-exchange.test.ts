// The exchange web app in a real browser (issue 24): headless Chromium signs in by the QR flow (a
// wallet the exchange has not seen becomes a user), creates an API key (secret shown once) and
// revokes it, grants an authorization, sees it funded when the wallet pays the delegated address,
// ends it now (expired and swept back); a refused grant shows the API's sentence. The key it made
// works on the signed API. Screenshots in .tmp/screenshots/.
import { createHmac, randomUUID } from "node:crypto"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { Devnet, Pay } from "../../schemas/devnet.ts"
import { collectPageErrors, launchBrowser, screenshot, type TestBrowser } from "../support/browser.ts"
import { makeWallet } from "../support/linkWallet.ts"
import { startNode, type RunningNode } from "../support/node.ts"
import { awaitSignInReady, signInPage } from "../support/walletSignIn.ts"

let db: TestDatabase
let node: RunningNode
let browser: TestBrowser

beforeAll(async () => {
  db = await createTestDatabase("webapp_exchange")
  ;[node, browser] = await Promise.all([startNode(db.url, { SHARDLINE_MESSAGE_POLL_MS: "200", SHARDLINE_DEVNET_BLOCK_MS: "500" }), launchBrowser()])
  await awaitSignInReady(node.baseUrl)
}, 150_000)
afterAll(async () => {
  await browser?.close()
  await node?.stop()
  await db?.drop()
})

const pay = (to: string, amount: string, asset: string) =>
  node.run(Effect.flatMap(Devnet.client, (c) => c("ledger").Pay(new Pay({ requestId: randomUUID(), to, amount, asset }))))

describe("exchange web app", () => {
  it("signs in, creates and revokes an API key, grants an authorization, sees it funded, ends it now", { timeout: 60_000 }, async () => {
    const wallet = makeWallet()
    const context = await browser.context()
    const page = await context.newPage()
    const errors = collectPageErrors(page)
    await signInPage(page, node.baseUrl, wallet)
    await page.locator(".who").waitFor()
    expect(await page.locator(".who").textContent()).toBe(wallet.addresses.p2pkh)

    // API key: read + trade, a label; the secret is shown once.
    await page.getByRole("checkbox", { name: "trade" }).check()
    await page.getByLabel("Label").fill("my bot")
    await page.getByRole("button", { name: "Create key" }).click()
    const created = page.locator("#new-key")
    await created.waitFor()
    const apiKey = (await created.locator("[data-field=apiKey]").textContent())!
    const secretKey = (await created.locator("[data-field=secretKey]").textContent())!
    expect(secretKey).toMatch(/^\S{20,}$/)
    await page.locator(`[data-key="${apiKey}"]`).waitFor()
    expect(await page.locator(`[data-key="${apiKey}"]`).textContent()).toContain("my bot")
    // The key works on the programs' signed API, as the signed-in user.
    const query = `timestamp=${Date.now()}`
    const signature = createHmac("sha256", secretKey).update(query).digest("hex")
    const account = await fetch(`${node.baseUrl}/api/v3/account?${query}&signature=${signature}`, { headers: { "x-mbx-apikey": apiKey } })
    expect(account.status).toBe(200)
    expect(((await account.json()) as { addresses: unknown }).addresses).toEqual([{ address: wallet.addresses.p2pkh, type: "p2pkh" }])

    // A refused grant: the API's sentence, no card.
    await page.getByLabel("Asset").fill("NOPE")
    await page.getByLabel("Cap").fill("5")
    await page.getByRole("button", { name: "Authorize" }).click()
    await page.getByText("NOPE is not traded here").waitFor()
    expect(await page.locator("[data-authorization]").count()).toBe(0)

    // A grant: delegated address with its payment QR and a countdown; funded live when the wallet pays.
    await page.getByLabel("Asset").fill("SHRD")
    await page.getByLabel("Cap").fill("5")
    await page.getByRole("button", { name: "Authorize" }).click()
    const card = page.locator("[data-authorization=SHRD]")
    await card.waitFor({ timeout: 20_000 })
    const delegated = (await card.locator("[data-field=delegatedAddress]").textContent())!
    expect(await card.locator(".qr").getAttribute("data-qr")).toBe(`ledger:${delegated}?asset=SHRD&amount=5`)
    expect(await card.locator(".countdown").textContent()).toMatch(/^\d+:\d\d$/)
    await pay(delegated, "2", "SHRD")
    await expect.poll(() => card.locator("[data-field=funded]").textContent(), { timeout: 20_000 }).toMatch(/^2(\.0+)?$/)
    await screenshot(page, "exchange-app")

    await card.getByRole("button", { name: "End now" }).click()
    await page.getByText("The SHRD authorization has ended").waitFor({ timeout: 30_000 })
    // The card goes with the list's refresh that follows the sentence.
    await expect.poll(() => page.locator("[data-authorization]").count(), { timeout: 10_000 }).toBe(0)

    await page.locator(`[data-key="${apiKey}"]`).getByRole("button", { name: "Revoke" }).click()
    await page.getByText("The key was revoked").waitFor()
    expect(await page.locator(`[data-key="${apiKey}"]`).count()).toBe(0)
    expect(errors).toEqual([])
    await context.close()
  })
})
