// The exchange web app in a real browser (issue 24): headless Chromium signs in by the QR flow (a
// wallet the exchange has not seen becomes a user), creates an API key (secret shown once) and
// revokes it (a bad IP allowlist refused in words; a key kept to one IP refused elsewhere), grants
// an authorization, sees it funded when the wallet pays the delegated address, ends it now (expired and swept back); a refused grant shows the API's sentence. The key it made
// works on the signed API, and the orders it places show live: open, then traded against a demo
// trader, with the trade's two legs, their txids and their confirmations rising, no reload. Failure
// paths: an expired sign-in challenge, a revoked session, a cross-site write on the cookie session.
// Screenshots in .tmp/screenshots/.
import { createHmac, randomUUID } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { signedQuery, type Key } from "../../harness/signed.ts"
import { ExchangeApi } from "../../schemas/exchange/api.ts"
import { ExchangeSessionAuth } from "../../schemas/exchange/webApp.ts"
import { configLayer } from "../../src/config.ts"
import { MarketRegistry } from "../../src/exchange/markets/MarketRegistry.ts"
import { OmniView } from "../../src/platform/ledger/OmniView.ts"
import { Devnet, Pay } from "../../schemas/devnet.ts"
import type { Page } from "playwright-core"
import { collectPageErrors, launchBrowser, screenshot, type TestBrowser, unlabelledControls } from "../support/browser.ts"
import { cli, cliJson } from "../support/cli.ts"
import { crossSiteAttempts, sessionWrites } from "../support/crossSite.ts"
import { makeWallet } from "../support/linkWallet.ts"
import { cliEnvOf, startNode, type RunningNode } from "../support/node.ts"
import { pgClientLayer } from "../support/pg.ts"
import { awaitSignInReady, signInPage, signInWithWallet } from "../support/walletSignIn.ts"

let db: TestDatabase
let node: RunningNode
let browser: TestBrowser

beforeAll(async () => {
  db = await createTestDatabase("webapp_exchange")
  ;[node, browser] = await Promise.all([startNode(db.url, {
    SHARDLINE_MESSAGE_POLL_MS: "200",
    SHARDLINE_DEVNET_BLOCK_MS: "500",
    // Final at 20 blocks (10 s at this clock): long enough for the page to show confirmations rising.
    SHARDLINE_SETTLEMENT_FINAL_DEPTH: "20"
  }), launchBrowser()])
  await awaitSignInReady(node.baseUrl)
}, 150_000)
afterAll(async () => {
  await browser?.close()
  await node?.stop()
  await db?.drop()
})

const pay = (to: string, amount: string, asset: string) =>
  node.run(Effect.flatMap(Devnet.client, (c) => c("ledger").Pay(new Pay({ requestId: randomUUID(), to, amount, asset }))))

const inNode = <A, E>(effect: Effect.Effect<A, E, any>) =>
  node.run(Effect.scoped(Effect.provide(effect, Layer.merge(pgClientLayer(db.url), configLayer(node.config)))) as Effect.Effect<A, E, never>)
const sql = (text: string) => inNode(Effect.flatMap(SqlClient.SqlClient, (s) => s.unsafe(text)))

/** What `address` holds of `asset` on the ledger, as the node's Omni view has it once caught up. */
const omniBalance = (address: string, asset: string) =>
  node.run(Effect.gen(function*() {
    const view = yield* OmniView
    const property = (yield* MarketRegistry).propertyOf(asset)!
    yield* view.sync
    return yield* view.balance(address, property)
  }))

/** An order on the programs' signed API (what a bot does with the key the app made). */
const order = async (key: Key, params: Record<string, string>) => {
  const r = await fetch(`${node.baseUrl}/api/v3/order?${signedQuery(key, params)}`, { method: "POST", headers: { "X-MBX-APIKEY": key.apiKey } })
  return { status: r.status, body: (await r.json()) as { orderId?: string | number; status?: string; code?: number; msg?: string } }
}

/** Signs in, creates a read + trade key and grants `asset` up to `cap`, paid in full: the key and the grant's card. */
const tradingUser = async (page: Page, asset: string, cap: string) => {
  await signInPage(page, node.baseUrl, makeWallet())
  await page.getByRole("checkbox", { name: "trade" }).check()
  await page.getByRole("button", { name: "Create key" }).click()
  const created = page.locator("#new-key")
  await created.waitFor()
  const key: Key = { apiKey: (await created.locator("[data-field=apiKey]").textContent())!, secretKey: (await created.locator("[data-field=secretKey]").textContent())! }
  await page.getByLabel("Asset").fill(asset)
  await page.getByLabel("Cap").fill(cap)
  await page.getByRole("button", { name: "Authorize" }).click()
  const card = page.locator(`[data-authorization=${asset}]`)
  await card.waitFor({ timeout: 20_000 })
  await pay((await card.locator("[data-field=delegatedAddress]").textContent())!, cap, asset)
  await expect.poll(() => card.locator("[data-field=funded]").textContent(), { timeout: 20_000 }).toMatch(new RegExp(`^${cap}(\\.0+)?$`))
  await expect.poll(() => card.locator("[data-field=toSend]").textContent()).toBe("0")
  await card.getByText("Fully funded: nothing more to send").waitFor()
  expect(await card.locator(".qr").getAttribute("data-qr")).toMatch(/\?asset=\w+$/)
  return { key, card }
}

describe("exchange web app", () => {
  it("signs in, creates and revokes an API key, grants an authorization, sees it funded, ends it now", { timeout: 60_000 }, async () => {
    const wallet = makeWallet()
    const context = await browser.context()
    const page = await context.newPage()
    const errors = collectPageErrors(page)
    await signInPage(page, node.baseUrl, wallet)
    await page.locator(".who").waitFor()
    expect(await page.locator(".who").textContent()).toBe(wallet.addresses.p2pkh)
    // The session cookie is HttpOnly (the page's script cannot read it) and SameSite=Strict.
    expect((await context.cookies()).find((c) => c.name === "sl_exchange_session")).toMatchObject({ httpOnly: true, sameSite: "Strict" })
    expect(await page.evaluate("document.cookie")).toBe("")

    // A bad IP allowlist is refused as a sentence, and no key is made.
    await page.getByLabel("IP allowlist").fill("203.0.113.7, not-an-ip")
    await page.getByRole("button", { name: "Create key" }).click()
    await page.getByText(`Parameter 'ipAllowlist' is invalid: "not-an-ip" is not an IPv4 or IPv6 address.`).waitFor()
    expect(await page.locator("[data-key]").count()).toBe(0)
    await page.getByLabel("IP allowlist").fill("")

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
    expect(await card.locator("[data-field=toSend]").textContent()).toBe("5")
    await pay(delegated, "2", "SHRD")
    await expect.poll(() => card.locator("[data-field=funded]").textContent(), { timeout: 20_000 }).toMatch(/^2(\.0+)?$/)
    // What is left to send, and the QR asks for just that.
    await expect.poll(() => card.locator("[data-field=toSend]").textContent()).toBe("3")
    await expect.poll(() => card.locator(".qr").getAttribute("data-qr")).toBe(`ledger:${delegated}?asset=SHRD&amount=3`)
    await screenshot(page, "exchange-app")
    expect(await unlabelledControls(page)).toEqual([])

    await card.getByRole("button", { name: "End now" }).click()
    await page.getByText("The SHRD authorization has ended").waitFor({ timeout: 30_000 })
    // The card goes with the list's refresh that follows the sentence.
    await expect.poll(() => page.locator("[data-authorization]").count(), { timeout: 10_000 }).toBe(0)
    // Swept back: the 2 SHRD are at the user's own address on the ledger (the spec's withdrawal).
    await expect.poll(() => omniBalance(wallet.addresses.p2pkh, "SHRD"), { timeout: 20_000 }).toBe(2n * 10n ** 8n)

    // A key kept to one IP says so, and the signed API refuses it from anywhere else (here).
    await page.getByLabel("IP allowlist").fill("203.0.113.7")
    await page.getByRole("button", { name: "Create key" }).click()
    await created.locator("[data-field=apiKey]").filter({ hasNotText: apiKey }).waitFor()
    const fenced = { apiKey: (await created.locator("[data-field=apiKey]").textContent())!, secretKey: (await created.locator("[data-field=secretKey]").textContent())! }
    await page.locator(`[data-key="${fenced.apiKey}"]`).waitFor()
    expect(await page.locator(`[data-key="${fenced.apiKey}"]`).textContent()).toContain("only from 203.0.113.7")
    const elsewhere = await fetch(`${node.baseUrl}/api/v3/account?${signedQuery(fenced, {})}`, { headers: { "x-mbx-apikey": fenced.apiKey } })
    expect({ status: elsewhere.status, body: await elsewhere.json() }).toMatchObject({ status: 403, body: { code: expect.any(Number), msg: expect.stringMatching(/\w+ \w+/) } })

    await page.locator(`[data-key="${apiKey}"]`).getByRole("button", { name: "Revoke" }).click()
    await page.getByText("The key was revoked").waitFor()
    await expect.poll(() => page.locator(`[data-key="${apiKey}"]`).count(), { timeout: 10_000 }).toBe(0)
    expect(errors).toEqual([])
    await context.close()
  })

  it("shows an open order placed with the app's key, then its trade against another trader with both legs, their txids and confirmations rising, without a reload", { timeout: 150_000 }, async () => {
    const context = await browser.context()
    const page = await context.newPage()
    const errors = collectPageErrors(page)
    const { key, card } = await tradingUser(page, "SHRD", "5")
    // The other side: a demo trader, funded in DUSD from its demo wallet.
    const other = cliJson<Key>(await cli(["demo", "trader", "--fund", "DUSD:100", "--json"], cliEnvOf(db.url, node)))
    // Set in the page: still there at the end means the page was never reloaded.
    await page.evaluate("window.noReloadMark = 1")

    const sell = await order(key, { symbol: "SHRDDUSD", side: "SELL", type: "LIMIT", timeInForce: "GTC", price: "1", quantity: "2" })
    expect(sell.body.msg ?? sell.body.status).toBe("NEW")
    const open = page.locator(`[data-order="${sell.body.orderId}"]`)
    await open.waitFor({ timeout: 10_000 })
    expect(await open.textContent()).toMatch(/^SELL 2(\.0+)? SHRDDUSD at 1(\.0+)? · NEW/)
    await screenshot(page, "exchange-open-order")

    const buy = await order(other, { symbol: "SHRDDUSD", side: "BUY", type: "LIMIT", timeInForce: "GTC", price: "1", quantity: "2" })
    expect(buy.body.msg ?? buy.body.status).toBe("FILLED")
    await open.waitFor({ state: "detached", timeout: 10_000 })
    const trade = page.locator("[data-trade]")
    await trade.waitFor({ timeout: 10_000 })
    expect(await trade.textContent()).toMatch(/^Sold 2(\.0+)? SHRDDUSD at 1(\.0+)?/)
    // Two legs: the SHRD goes to the buyer, the DUSD comes to this wallet; each gets its txid.
    expect((await trade.locator("[data-leg]").evaluateAll((ls) => ls.map((l) => l.getAttribute("data-leg")))).sort()).toEqual(["DUSD", "SHRD"])
    for (const asset of ["SHRD", "DUSD"]) {
      await expect.poll(() => trade.locator(`[data-leg=${asset}] [data-field=txid]`).count(), { timeout: 30_000 }).toBe(1)
      expect(await trade.locator(`[data-leg=${asset}] [data-field=txid]`).textContent()).toMatch(/^[0-9a-f]{64}$/)
    }
    // Confirmations rise as blocks come, shown by the page's own polling.
    const confirmations = () => trade.locator("[data-leg=SHRD] [data-field=confirmations]").textContent().then(Number)
    await expect.poll(confirmations, { timeout: 20_000 }).toBeGreaterThanOrEqual(1)
    const seen = await confirmations()
    await expect.poll(confirmations, { timeout: 20_000 }).toBeGreaterThan(seen)
    // Counted from the market's tip: the leg's row keeps the count of its first block, not
    // rewritten each block (legState.ts, needsWrite and shownConfirmations).
    const [row] = await sql(`SELECT confirmations, status FROM settlement_legs WHERE trade_id = ${Number(await trade.getAttribute("data-trade"))} AND asset = 'SHRD'`) as ReadonlyArray<{ confirmations: number; status: string }>
    expect(row!.status).toBe("confirmed")
    expect(row!.confirmations).toBeLessThan(await confirmations())
    // What trades spent of the cap is not asked for again: the grant is still fully funded.
    await expect.poll(() => card.locator("[data-field=used]").textContent()).toMatch(/^2(\.0+)?$/)
    expect(await card.locator("[data-field=toSend]").textContent()).toBe("0")
    expect(await page.evaluate("window.noReloadMark")).toBe(1)
    await screenshot(page, "exchange-trades")
    expect(errors).toEqual([])
    await context.close()
  })

  it("shows an expired sign-in challenge as a sentence, and sends a revoked session back to sign-in", { timeout: 40_000 }, async () => {
    const context = await browser.context({ phone: true })
    const page = await context.newPage()
    await page.goto(`${node.baseUrl}/app/sign-in`)
    const id = await page.locator("[data-challenge]").getAttribute("data-challenge")
    await sql(`UPDATE signin_challenges SET expires_at = now() - interval '1 second' WHERE id = '${id}'`)
    await page.getByText("This sign-in code has expired").waitFor({ timeout: 10_000 })
    await screenshot(page, "exchange-sign-in-expired-phone")
    // Keyboard: the way on has the focus, so Enter gets a new code.
    expect(await page.evaluate("document.activeElement?.textContent")).toBe("Get a new code")
    await page.keyboard.press("Enter")
    await expect.poll(() => page.locator("[data-challenge]").getAttribute("data-challenge")).not.toBe(id)

    const wallet = makeWallet()
    await signInPage(page, node.baseUrl, wallet)
    await page.locator(".who").waitFor()
    await sql(`UPDATE web_sessions SET revoked_at = now() WHERE service = 'exchange' AND address = '${wallet.addresses.p2pkh}'`)
    // Every node's cache drops a revoked session within 2 s.
    await expect.poll(async () => {
      await page.goto(`${node.baseUrl}/app/`)
      await page.waitForLoadState("networkidle")
      return new URL(page.url()).pathname
    }, { timeout: 10_000 }).toBe("/app/sign-in")
    await context.close()
  })

  it("refuses every cookie-session change sent as another site would, in the exchange's {code, msg} shape", { timeout: 40_000 }, async () => {
    const writes = sessionWrites(ExchangeApi, ExchangeSessionAuth)
    // The app's own writes are among them (keys, grants, end now, sign-out, sessions).
    expect(writes.map((w) => `${w.method} ${w.path}`)).toEqual(expect.arrayContaining([
      "POST /api/app/keys", "POST /api/app/authorizations", "POST /api/public/auth/sign-out", expect.stringMatching(/^DELETE \/api\/app\/keys\//),
      expect.stringMatching(/^POST \/api\/app\/authorizations\/\w+\/end$/), expect.stringMatching(/^DELETE \/api\/public\/v1\/sessions\//)
    ]))
    const me = await signInWithWallet(node.baseUrl, makeWallet(), "sl_exchange")
    for (const answer of await crossSiteAttempts(node.baseUrl, writes, me.cookie)) {
      expect(answer, JSON.stringify(answer)).toMatchObject({ status: 403, body: { code: -2032, msg: expect.stringMatching(/\w+ \w+/) } })
    }
    // The session still works: nothing above signed it out.
    expect((await fetch(`${node.baseUrl}/api/app/keys`, { headers: { cookie: me.cookie } })).status).toBe(200)
  })
})
