// Desk wallet linking and rewards through the whole stack: a real node on a real Postgres, real
// BIP-137 signatures made by the chain layer's signer, the DeskLinkToken and LinkedWallet
// entities with their durable timers, tokens moved on the ledger devnet.
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { faucetOmniSend } from "../../harness/faucetOmni.ts"
import { MintLinkToken } from "../../schemas/common/linkToken.ts"
import { DeskLinkToken } from "../../schemas/desk/identity.ts"
import { issueDeskLinkToken } from "../../src/desk/identity/issueLinkToken.ts"
import { canonicalJson } from "../../src/crypto/canonicalJson.ts"
import { configLayer } from "../../src/config.ts"
import { DevnetChains } from "../../src/platform/devnet/DevnetChains.ts"
import { linkTokenId, newChallengeId, newLinkToken } from "../../src/platform/identity/linkTokens.ts"
import { cli, cliJson } from "../support/cli.ts"
import { deskPayload, makeWallet, type SignKind, type TestWallet } from "../support/linkWallet.ts"
import { pgClientLayer } from "../support/pg.ts"
import { startNode, testMasterKey, type RunningNode } from "../support/node.ts"
import { createDeskKey } from "../support/services.ts"

let db: TestDatabase
let node: RunningNode
const v1 = "/api/public/v1"
const sampleMs = 2000
const vars = { SHARDLINE_REWARDS_SAMPLE_MS: String(sampleMs), SHARDLINE_MESSAGE_POLL_MS: "200" }

beforeAll(async () => {
  db = await createTestDatabase("wldesk")
  node = await startNode(db.url, vars)
}, 60_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const json = async (r: Response) => ({ status: r.status, body: (await r.json()) as Record<string, any> })
/** Runs inside the node, with a database client and the node's config beside its services. */
const inNode = <A, E>(effect: Effect.Effect<A, E, any>) =>
  node.run(Effect.scoped(Effect.provide(effect, Layer.merge(pgClientLayer(db.url), configLayer(node.config)))) as Effect.Effect<A, E, never>)
const query = <A extends object>(text: string) => inNode(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(text)))
const issue = (memberId?: string, allowRebind = false) => inNode(issueDeskLinkToken({ memberId, allowRebind }))
const manifestOf = async (url: string) => json(await fetch(url, { headers: { accept: "application/json" } }))
const post = (url: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then(json)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** A signed envelope for the manifest at `url`, as a wallet makes it. */
const envelopeFor = async (url: string, wallet: TestWallet, kind: SignKind = "compressed", evm?: string) => {
  const { body: manifest } = await manifestOf(url)
  const payload = deskPayload(manifest, wallet, evm)
  return { payload, signature: wallet.signJson(payload, kind), address: wallet.addressFor[kind] }
}
const keyInfo = (apiKey: string) => fetch(`${node.deskUrl}${v1}/key`, { headers: { "x-api-key": apiKey } }).then(json)
const tokenStatus = async (token: string) =>
  (await query<{ status: string; failures: number }>(`SELECT status, failures FROM link_tokens WHERE token_hash = '${linkTokenId(token)}'`))[0]

describe("desk wallet-link GET", () => {
  it("shows the manifest as JSON, or as a page holding <script type=\"wl-link-xpubs\">", async () => {
    const issued = await issue()
    expect(issued.url).toBe(`${node.deskUrl}${v1}/wallet-link?token=${issued.token}`)
    const { status, body } = await manifestOf(issued.url)
    expect(status).toBe(200)
    expect(body).toMatchObject({
      v: 1, type: "wl-link-xpubs", from: node.deskUrl, callback_url: issued.url, chains: ["LEDGER", "EVM", "BASE"],
      allow_rebind: false, expires_at: issued.expiresAt,
      sign: { message: "canonicalJson(payload)", scheme: "BIP-137", path: "m/44'/696969'/0'/0/0", prefix: "Shardline Signed Message:\n" }
    })
    expect(body.exp).toBe(Math.floor(Date.parse(issued.expiresAt) / 1000))
    expect(Date.parse(issued.expiresAt) - Date.parse(body.issued_at)).toBe(5 * 60_000)
    const page = await fetch(issued.url)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toContain("text/html")
    const html = await page.text()
    const script = /<script type="wl-link-xpubs">(.*?)<\/script>/s.exec(html)
    expect(script).not.toBeNull()
    expect(JSON.parse(script![1]!)).toEqual(body)
  })

  it("answers 410 for an unknown token and 400 for one that cannot be a token", async () => {
    const unknown = await manifestOf(`${node.deskUrl}${v1}/wallet-link?token=${newLinkToken()}`)
    expect(unknown).toEqual({ status: 410, body: { error: { code: "token_used", message: expect.any(String) } } })
    const bad = await manifestOf(`${node.deskUrl}${v1}/wallet-link?token=short`)
    expect(bad.status).toBe(400)
    expect(bad.body.error.code).toBe("invalid_parameter")
    expect((await manifestOf(`${node.deskUrl}${v1}/wallet-link`)).status).toBe(400)
  })
})

describe("desk wallet-link POST", () => {
  it("links: stores the xpub, fills payout addresses, returns a new cashout+rewards key and revokes the old one; a replay is 410", async () => {
    const old = await createDeskKey(db.url, { scopes: ["cashout"], callbackUrl: "https://partner.example/cb" })
    const issued = await issue(old.memberId)
    const wallet = makeWallet()
    const envelope = await envelopeFor(issued.url, wallet)
    const { status, body } = await post(issued.url, envelope)
    expect(status, JSON.stringify(body)).toBe(200)
    expect(body).toMatchObject({
      member_id: old.memberId, scopes: ["cashout", "rewards"], signing_address: wallet.addresses.p2pkh,
      token_payout_address: wallet.addresses.p2pkh, usdc_payout_address: "0x52908400098527886E0F7030069857D2E4169EE7",
      base_payout_address: "0x52908400098527886E0F7030069857D2E4169EE7", revoked_keys: 1
    })
    const fresh = await keyInfo(body.api_key)
    expect(fresh.status).toBe(200)
    expect(fresh.body).toMatchObject({ memberId: old.memberId, scopes: ["cashout", "rewards"], callbackUrl: "https://partner.example/cb" })
    const [member] = await query<Record<string, string>>(`SELECT token_payout_address, usdc_payout_address, base_payout_address FROM desk_members WHERE id = '${old.memberId}'`)
    expect(member).toEqual({ token_payout_address: wallet.addresses.p2pkh, usdc_payout_address: body.usdc_payout_address, base_payout_address: body.base_payout_address })
    const [stored] = await query<{ xpub: string }>(`SELECT xpub FROM desk_wallets WHERE member_id = '${old.memberId}'`)
    expect(stored!.xpub).toBe(wallet.xpub)
    // The replaced key is refused on every node within 2 s (the credential cache's revocation poll).
    await expect.poll(async () => (await keyInfo(old.apiKey)).status, { timeout: 5000, interval: 250 }).toBe(401)
    expect(await tokenStatus(issued.token)).toEqual({ status: "used", failures: 0 })
    const replay = await post(issued.url, envelope)
    expect(replay).toEqual({ status: 410, body: { error: { code: "token_used", message: expect.any(String) } } })
    expect((await manifestOf(issued.url)).status).toBe(410)
  })

  it("takes a wallet's own issued_at (its signing time) and an envelope POSTed to the bare path, the token only in payload.callback_url", async () => {
    const issued = await issue()
    const wallet = makeWallet()
    const { body: manifest } = await manifestOf(issued.url)
    const payload = { ...deskPayload(manifest, wallet), issued_at: new Date(Date.now() - 1500).toISOString() }
    expect(payload.issued_at).not.toBe(manifest.issued_at)
    const envelope = { payload, signature: wallet.signJson(payload), address: wallet.addresses.p2pkh }
    const linked = await post(`${node.deskUrl}${v1}/wallet-link`, envelope)
    expect(linked.status, JSON.stringify(linked.body)).toBe(200)
    expect(linked.body.signing_address).toBe(wallet.addresses.p2pkh)
    expect(await tokenStatus(issued.token)).toEqual({ status: "used", failures: 0 })
    // A signing time outside the token's life is refused, and counts.
    const other = await issue()
    const { body: m2 } = await manifestOf(other.url)
    const stale = { ...deskPayload(m2, wallet), issued_at: "2020-01-01T00:00:00.000Z" }
    const refused = await post(other.url, { payload: stale, signature: wallet.signJson(stale), address: wallet.addresses.p2pkh })
    expect(refused.status).toBe(401)
    expect(refused.body.error.message).toContain("issued_at")
    // No token anywhere: 400, the documented shape.
    const nowhere = { ...deskPayload(m2, wallet), callback_url: `${node.deskUrl}${v1}/wallet-link` }
    const missing = await post(`${node.deskUrl}${v1}/wallet-link`, { payload: nowhere, signature: wallet.signJson(nowhere), address: wallet.addresses.p2pkh })
    expect(missing).toEqual({ status: 400, body: { error: { code: "invalid_parameter", message: expect.stringContaining("token") } } })
    expect(await tokenStatus(other.token)).toEqual({ status: "issued", failures: 1 })
  })

  it("takes an EVM extended public key and pays to its m/0/0", async () => {
    // BIP-32 test vector 1's m/0'/1 public key, whose m/0/0 child has a fixed ethereum address.
    const xpub = "xpub6ASuArnXKPbfEwhqN6e3mwBcDTgzisQN1wXN9BJcM47sSikHjJf3UFHKkNAWbWMiGj7Wf5uMash7SyYq527Hqck2AxYysAA7xmALppuCkwQ"
    const issued = await issue()
    const { body } = await post(issued.url, await envelopeFor(issued.url, makeWallet(), "compressed", xpub))
    expect(body.usdc_payout_address).toMatch(/^0x[0-9a-fA-F]{40}$/)
    expect(body.base_payout_address).toBe(body.usdc_payout_address)
  })

  it("accepts every BIP-137 header kind and Electrum-style signatures", async () => {
    for (const kind of ["uncompressed", "p2sh-p2wpkh", "p2wpkh", "electrum-p2sh", "electrum-p2wpkh"] as const) {
      const wallet = makeWallet()
      const issued = await issue()
      const envelope = await envelopeFor(issued.url, wallet, kind)
      // The desk takes only a legacy base58 address; a P2WPKH signature names the key's legacy address.
      if (kind === "p2wpkh" || kind === "electrum-p2wpkh") envelope.address = wallet.addresses.p2pkh
      const { status, body } = await post(issued.url, envelope)
      expect(status, `${kind}: ${JSON.stringify(body)}`).toBe(200)
      expect(body.signing_address).toBe(wallet.addresses.p2pkh)
    }
  })

  it("refuses malformed input with 400, stores nothing and leaves the token usable", async () => {
    const issued = await issue()
    const wallet = makeWallet()
    const good = await envelopeFor(issued.url, wallet)
    const cases: Array<[string, unknown, string]> = [
      ["bad base64", { ...good, signature: "not base64!!" }, "signature"],
      ["short signature", { ...good, signature: Buffer.alloc(30).toString("base64") }, "signature"],
      ["bech32 address", { ...good, address: wallet.addresses.p2wpkh }, "legacy T"],
      ["not a ledger address", { ...good, address: "1BoatSLRHtKNngkdXEeobR76b53LETtpyT" }, "address"],
      ["oversized xpub", { ...good, payload: { ...good.payload, xpubs: { ...good.payload.xpubs, LEDGER: "T".repeat(5000) } } }, "payload"],
      ["private key as xpub", { ...good, payload: { ...good.payload, xpubs: { ...good.payload.xpubs, LEDGER: "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi" } } }, "LEDGER"],
      ["bad EVM address", { ...good, payload: { ...good.payload, xpubs: { ...good.payload.xpubs, EVM: "0x1234" } } }, "EVM"],
      ["missing payload", { signature: good.signature, address: good.address }, "payload"],
      ["oversized envelope", { ...good, padding: "x".repeat(40 * 1024) }, ""]
    ]
    for (const [name, body, mention] of cases) {
      const r = await post(issued.url, body)
      expect([400, 413], `${name}: ${JSON.stringify(r.body)}`).toContain(r.status)
      expect(r.body.error.message, name).toContain(mention)
    }
    expect(await tokenStatus(issued.token)).toEqual({ status: "issued", failures: 0 })
    expect(await query(`SELECT 1 FROM desk_wallets WHERE signing_address = '${wallet.addresses.p2pkh}'`)).toHaveLength(0)
    expect((await post(issued.url, good)).status).toBe(200)
  })

  it("answers 401 for a signature over another message or a manifest field changed after signing; the token counts the failure", async () => {
    const issued = await issue()
    const wallet = makeWallet()
    const good = await envelopeFor(issued.url, wallet)
    const otherMessage = await post(issued.url, { ...good, signature: wallet.sign("another message") })
    expect(otherMessage).toEqual({ status: 401, body: { error: { code: "invalid_signature", message: expect.any(String) } } })
    const changed = await post(issued.url, { ...good, payload: { ...good.payload, wallet: "Evil Wallet" } })
    expect(changed.status).toBe(401)
    // Signed correctly, but over a manifest of another link (a replay from another app).
    const foreign = { ...good.payload, challenge_id: newChallengeId() }
    const replayed = await post(issued.url, { payload: foreign, signature: wallet.signJson(foreign), address: good.address })
    expect(replayed.status).toBe(401)
    expect(replayed.body.error.message).toContain("challenge_id")
    // Another wallet's key signing for this xpub's address.
    const thief = makeWallet()
    expect((await post(issued.url, { ...good, signature: thief.signJson(good.payload) })).status).toBe(401)
    expect(await tokenStatus(issued.token)).toEqual({ status: "issued", failures: 4 })
    expect((await post(issued.url, good)).status).toBe(200)
  })

  it("spends a token after 5 refused attempts", async () => {
    const issued = await issue()
    const wallet = makeWallet()
    const good = await envelopeFor(issued.url, wallet)
    // Signed correctly, but naming another token's link as its callback.
    const elsewhere = { ...good.payload, callback_url: `${node.deskUrl}${v1}/wallet-link?token=${newLinkToken()}` }
    const redirected = await post(issued.url, { payload: elsewhere, signature: wallet.signJson(elsewhere), address: good.address })
    expect(redirected.status).toBe(401)
    expect(redirected.body.error.message).toContain("callback_url")
    for (let i = 1; i < 5; i++) expect((await post(issued.url, { ...good, signature: wallet.sign(`guess ${i}`) })).status).toBe(401)
    expect((await post(issued.url, good)).status).toBe(410)
    expect(await tokenStatus(issued.token)).toEqual({ status: "spent", failures: 5 })
  })

  it("answers 409 when the wallet is linked to another member, 403 unknown_signer for a rebind without consent", async () => {
    const wallet = makeWallet()
    const first = await issue()
    expect((await post(first.url, await envelopeFor(first.url, wallet))).status).toBe(200)
    const other = await issue()
    const conflict = await post(other.url, await envelopeFor(other.url, wallet))
    expect(conflict).toEqual({ status: 409, body: { error: { code: "wallet_linked", message: expect.any(String) } } })
    // The same member, a new wallet, a token that does not allow rebinding.
    const rebind = await issue(first.memberId)
    const newWallet = makeWallet()
    const refused = await post(rebind.url, await envelopeFor(rebind.url, newWallet))
    expect(refused).toEqual({ status: 403, body: { error: { code: "unknown_signer", message: expect.any(String) } } })
    const [still] = await query<{ signing_address: string }>(`SELECT signing_address FROM desk_wallets WHERE member_id = '${first.memberId}'`)
    expect(still!.signing_address).toBe(wallet.addresses.p2pkh)
    // The same wallet again needs no consent (a rescan: new key, old one revoked).
    const rescan = await issue(first.memberId)
    const again = await post(rescan.url, await envelopeFor(rescan.url, wallet))
    expect(again.status).toBe(200)
    expect(again.body.revoked_keys).toBe(1)
    const consented = await issue(first.memberId, true)
    expect((await manifestOf(consented.url)).body.allow_rebind).toBe(true)
    const moved = await post(consented.url, await envelopeFor(consented.url, newWallet))
    expect(moved.status).toBe(200)
    expect(moved.body.signing_address).toBe(newWallet.addresses.p2pkh)
  })

  it("lets exactly one of many concurrent redeems of one token through", async () => {
    const issued = await issue()
    const envelope = await envelopeFor(issued.url, makeWallet())
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(issued.url, envelope)))
    expect(answers.map((a) => a.status).sort()).toEqual([200, 410, 410, 410, 410, 410])
    expect(await query(`SELECT 1 FROM desk_api_keys WHERE member_id = '${issued.memberId}'`)).toHaveLength(1)
  })

  it("expires an unused token by its own durable timer: 410 token_expired", async () => {
    const token = newLinkToken()
    const now = Date.now()
    const [member] = await query<{ id: string }>("INSERT INTO desk_members DEFAULT VALUES RETURNING id")
    await node.run(Effect.flatMap(DeskLinkToken.client, (c) => c(linkTokenId(token)).Mint(new MintLinkToken({
      subject: member!.id, challengeId: newChallengeId(), allowRebind: false, issuedAtMs: now, expiresAtMs: now + 1500
    }))))
    const url = `${node.deskUrl}${v1}/wallet-link?token=${token}`
    const envelope = await envelopeFor(url, makeWallet())
    await expect.poll(async () => (await tokenStatus(token))?.status, { timeout: 10_000, interval: 200 }).toBe("expired")
    expect(await post(url, envelope)).toEqual({ status: 410, body: { error: { code: "token_expired", message: expect.any(String) } } })
    expect((await manifestOf(url)).body.error.code).toBe("token_expired")
  })
})

describe("desk link-token CLI", () => {
  it("prints {token, url, memberId, expiresAt} for a member, and refuses an unknown member", async () => {
    // No port setting: the URL is the running node's (its listener on a port of its own), not the default (issue 23.17).
    const env = { SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey }
    const member = await createDeskKey(db.url, { scopes: ["cashout"] })
    const out = cliJson<{ token: string; url: string; memberId: string; expiresAt: string }>(await cli(["desk", "link-token", "--member", member.memberId, "--allow-rebind", "--json"], env))
    expect(out.memberId).toBe(member.memberId)
    expect(out.url).toBe(`${node.deskUrl}${v1}/wallet-link?token=${out.token}`)
    const { body } = await manifestOf(out.url)
    expect(body.allow_rebind).toBe(true)
    const refused = await cli(["desk", "link-token", "--member", "00000000-0000-0000-0000-000000000000", "--json"], env)
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("no desk member")
  })
})

describe("LinkedWallet and rewards/balance", () => {
  it("samples the Omni token balance of derived addresses, grows the gap window, and records missed slots as missing", async () => {
    const wallet = makeWallet()
    const issued = await issue()
    const linked = await post(issued.url, await envelopeFor(issued.url, wallet))
    expect(linked.status).toBe(200)
    const apiKey = linked.body.api_key as string
    const memberId = issued.memberId
    const rewards = (address: string, days = "30", key = apiKey) =>
      fetch(`${node.deskUrl}${v1}/rewards/balance?address=${encodeURIComponent(address)}&days=${days}`, { headers: { "x-api-key": key } }).then(json)
    // Both branches derived to the gap limit at once.
    await expect.poll(async () => (await query(`SELECT 1 FROM linked_wallet_addresses WHERE member_id = '${memberId}'`)).length, { timeout: 10_000 }).toBe(40)
    // The desk's own dollar tokens: 1.5 SUSD to receive/3 and 2.25 XUSD to receive/19 (the last of
    // the first window: the window grows to 40). 5 of the devnet's DUSD to receive/4 count for nothing.
    const pay = (to: string, amount: string, asset: string) => node.run(Effect.flatMap(DevnetChains, (c) => c.pay("ledger", to, amount, asset)))
    await pay(wallet.derived(3), "1.5", "SUSD")
    await pay(wallet.derived(19), "2.25", "XUSD")
    await node.run(faucetOmniSend(wallet.derived(4), 3, 500_000_000n))
    await expect.poll(async () => (await rewards(wallet.addresses.p2pkh)).body.currentBalance, { timeout: 10_000 }).toBe("3.75")
    await expect.poll(async () =>
      (await query<{ n: string }>(`SELECT count(*)::text AS n FROM linked_wallet_samples WHERE member_id = '${memberId}' AND balance_base = 375000000`))[0]!.n,
    { timeout: 15_000, interval: 500 }).not.toBe("0")
    const [receive] = await query<{ n: string }>(`SELECT count(*)::text AS n FROM linked_wallet_addresses WHERE member_id = '${memberId}' AND branch = 0`)
    expect(Number(receive!.n)).toBe(40)
    const now = await rewards(wallet.addresses.p2pkh)
    expect(now.status).toBe(200)
    expect(now.body).toMatchObject({ matched: "signing_address", currentBalance: "3.75", days: 30 })
    expect(now.body.tokens).toEqual([
      { asset: "SUSD", propertyId: 6, currentBalance: "1.5", averageDailyBalance: expect.any(String) },
      { asset: "XUSD", propertyId: 7, currentBalance: "2.25", averageDailyBalance: expect.any(String) }
    ])
    // Each sample keeps what each token added to its total.
    const perToken = await query<{ property_id: string; balance_base: string }>(`SELECT t.property_id::text AS property_id, t.balance_base::text AS balance_base
      FROM desk_wallet_token_samples t JOIN linked_wallet_samples s USING (member_id, slot_at)
      WHERE member_id = '${memberId}' AND s.balance_base = 375000000 ORDER BY slot_at DESC, property_id LIMIT 2`)
    expect(perToken).toEqual([{ property_id: "6", balance_base: "150000000" }, { property_id: "7", balance_base: "225000000" }])
    expect(now.body.sampleCount).toBeGreaterThan(0)
    expect(JSON.stringify(now.body)).not.toMatch(/@|email/i)
    expect((await rewards(wallet.derived(19))).body.matched).toBe("derived_address")
    expect((await rewards(wallet.derived(35))).body.matched).toBe("derived_address")
    expect((await rewards(linked.body.usdc_payout_address.toLowerCase())).body.matched).toBe("evm_address")
    const inbox = makeWallet().addresses.p2pkh
    expect((await rewards(inbox)).status).toBe(404)
    await query(`UPDATE desk_members SET token_inbox_address = '${inbox}' WHERE id = '${memberId}'`)
    expect((await rewards(inbox)).body).toMatchObject({ matched: "token_inbox", currentBalance: "3.75" })
    expect((await rewards(wallet.addresses.p2pkh, "0")).status).toBe(400)
    expect((await rewards(wallet.addresses.p2pkh, "x")).status).toBe(400)
    // Another member's key does not read this wallet; a key without the rewards scope is refused.
    const stranger = await createDeskKey(db.url, { scopes: ["rewards"] })
    expect((await rewards(wallet.addresses.p2pkh, "30", stranger.apiKey)).status).toBe(404)
    const cashoutOnly = await createDeskKey(db.url, { scopes: ["cashout"] })
    expect((await rewards(wallet.addresses.p2pkh, "30", cashoutOnly.apiKey)).status).toBe(403)

    // The cluster goes down for a few slots: they are recorded as missing, and sampling resumes.
    await node.stop()
    const downAt = Date.now()
    await sleep(4 * sampleMs + 500)
    node = await startNode(db.url, { ...vars, SHARDLINE_DATA_DIR: node.config.dataDir })
    await expect.poll(async () =>
      (await query<{ n: string }>(`SELECT count(*)::text AS n FROM linked_wallet_samples WHERE member_id = '${memberId}' AND balance_base IS NULL
        AND slot_at > '${new Date(downAt).toISOString()}'`))[0]!.n,
    { timeout: 20_000, interval: 500 }).not.toBe("0")
    await expect.poll(async () =>
      (await query<{ n: string }>(`SELECT count(*)::text AS n FROM linked_wallet_samples WHERE member_id = '${memberId}' AND balance_base IS NOT NULL
        AND slot_at > '${new Date(Date.now() - 1000).toISOString()}'::timestamptz - interval '5 seconds'`))[0]!.n,
    { timeout: 20_000, interval: 500 }).not.toBe("0")
    const after = await rewards(wallet.addresses.p2pkh)
    expect(after.body.missingCount).toBeGreaterThan(0)
    expect(after.body.averageDailyBalance).toMatch(/^\d+(\.\d+)?$/)
    // No invented balance: the missing slots hold no balance.
    const rows = await query<{ balance_base: string | null; taken_at: Date | null }>(`SELECT balance_base, taken_at FROM linked_wallet_samples
      WHERE member_id = '${memberId}' AND balance_base IS NULL`)
    expect(rows.every((r) => r.taken_at === null)).toBe(true)
    expect(canonicalJson({ b: 1, a: 2 })).toBe('{"a":2,"b":1}')
  }, 120_000)
})
