// Markets and the demo world, end to end: a node on a fresh database and the ledger devnet makes
// the demo world by itself (SHRD, GOLD as Omni properties, SHRDDUSD and GOLDDUSD listed); the
// CLI lists and adds markets (a new asset is issued by the node), makes demo traders whose
// delegated addresses hold their caps, and a later grant of such a user is funded too. A restart
// re-issues every registered asset with the same property id, and a registry that does not match
// the devnet stops the node.
import { Effect, Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { devnetFaucetAddress } from "../../src/chain/ledger/devnetFaucet.ts"
import { syncOnce } from "../../src/chain/ledger/follower.ts"
import { ledgerParams } from "../../src/chain/params.ts"
import { formatAmount } from "../../src/chain/units.ts"
import { UtxoLedger } from "../../src/chain/ledger/UtxoLedger.ts"
import { OmniIndexer } from "../../src/chain/omni/indexer.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { signedGet } from "../../harness/signed.ts"
import { cli, cliJson, cliRefused } from "../support/cli.ts"
import { cliEnvOf, startNode, type RunningNode } from "../support/node.ts"

let db: TestDatabase
let node: RunningNode
let env: Record<string, string>
const nodeVars = { SHARDLINE_DEVNET_BLOCK_MS: "0" }

beforeAll(async () => {
  db = await createTestDatabase("markets")
  node = await startNode(db.url, nodeVars)
  env = cliEnvOf(db.url, node)
}, 120_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const json = cliJson
const refused = cliRefused
const balance = async (address: string, asset: string) =>
  json<{ balance: string }>(await cli(["devnet", "balance", "--chain", "ledger", "--address", address, "--asset", asset, "--json"], env)).balance

interface MarketView { symbol: string; base: string; quote: string; tickSize: string; stepSize: string; minNotional: string; status: string }
interface Trader {
  apiKey: string
  secretKey: string
  userId: number
  address: string
  authorizations: Array<{ grantId: string; asset: string; cap: string; expiresAt: number; delegatedAddress: string; funded: string }>
}

/** What `address` holds of market asset `code` on the node's devnet, read there (no CLI round trip). */
const held = async (address: string, code: string) => {
  const [row] = await db.query<{ id: number }>("SELECT property_id::int AS id FROM exchange_assets WHERE code = $1", [code])
  const sats = await node.run(Effect.gen(function*() {
    const ledger = yield* UtxoLedger
    const indexer = new OmniIndexer({ params: ledger.params })
    yield* syncOnce(ledger, indexer)
    return indexer.balance(address, row!.id)
  }))
  return Either.getOrThrow(formatAmount(sats, 8))
}

/** Property id → name on the node's own ledger devnet, by our indexer. */
const devnetProperties = (running: RunningNode) =>
  running.run(Effect.gen(function*() {
    const ledger = yield* UtxoLedger
    const indexer = new OmniIndexer({ params: ledger.params })
    yield* syncOnce(ledger, indexer)
    return Object.fromEntries(indexer.properties().map((p) => [p.id, p.name]))
  }))

describe("markets and the demo world", () => {
  it("a fresh devnet start lists SHRDDUSD and GOLDDUSD over SHRD, GOLD and DUSD", { timeout: 120_000 }, async () => {
    const { markets } = json<{ markets: Array<MarketView> }>(await cli(["markets", "list", "--json"], env))
    expect(markets.length).toBeGreaterThanOrEqual(2)
    expect(markets).toEqual([
      { symbol: "SHRDDUSD", base: "SHRD", quote: "DUSD", tickSize: "0.0001", stepSize: "0.01", minNotional: "1", status: "TRADING" },
      { symbol: "GOLDDUSD", base: "GOLD", quote: "DUSD", tickSize: "0.01", stepSize: "0.0001", minNotional: "10", status: "TRADING" }
    ])
    expect(await db.query("SELECT code, property_id::int AS id FROM exchange_assets ORDER BY property_id")).toEqual([
      { code: "DUSD", id: 3 },
      { code: "SHRD", id: 4 },
      { code: "GOLD", id: 5 }
    ])
    // Issued by the asset issuer, one system wallet shared through the database.
    const [issuer] = await db.query<{ address: string }>("SELECT address FROM system_wallets WHERE name = 'asset-issuer'")
    expect(issuer?.address).toMatch(/^T/)
    expect(await devnetProperties(node)).toMatchObject({ 3: "Devnet Dollar", 4: "SHRD", 5: "GOLD" })
  })

  it("markets add issues a new asset on the devnet, lists between known assets, and refuses bad input", { timeout: 240_000 }, async () => {
    const added = json<MarketView>(await cli(["markets", "add", "--symbol", "SILVDUSD", "--base", "SILV", "--quote", "DUSD", "--tick", "0.001", "--lot", "0.1", "--min-notional", "5", "--json"], env))
    expect(added).toEqual({ symbol: "SILVDUSD", base: "SILV", quote: "DUSD", tickSize: "0.001", stepSize: "0.1", minNotional: "5", status: "TRADING" })
    // 6..10 are the desk's tokens, issued right after the demo world (docs/desk.md).
    expect(await db.query("SELECT property_id::int AS id FROM exchange_assets WHERE code = 'SILV'")).toEqual([{ id: 11 }])
    // Every market asset is a --asset of the devnet commands (the faucet holds the supply).
    const faucet = devnetFaucetAddress(ledgerParams)
    expect(Number(await balance(faucet, "SILV"))).toBeGreaterThan(0)
    const cross = json<MarketView>(await cli(["markets", "add", "--symbol", "SHRD_GOLD", "--base", "shrd", "--quote", "GOLD", "--tick", "0.000001", "--lot", "0.01", "--min-notional", "0.001", "--json"], env))
    expect(cross.symbol).toBe("SHRDGOLD")

    const [finer, duplicate, mismatch, realNode, realNodeBoth] = await Promise.all([
      cli(["markets", "add", "--symbol", "SHRDDUSD", "--base", "SHRD", "--quote", "DUSD", "--tick", "0.00001", "--lot", "0.0001", "--min-notional", "1", "--json"], env),
      cli(["markets", "add", "--symbol", "GOLDDUSD", "--base", "GOLD", "--quote", "DUSD", "--tick", "0.01", "--lot", "0.01", "--min-notional", "1", "--json"], env),
      cli(["markets", "add", "--symbol", "GOLDDUSD", "--base", "SHRD", "--quote", "DUSD", "--tick", "0.01", "--lot", "0.01", "--min-notional", "1", "--json"], env),
      cli(["markets", "add", "--symbol", "PLATDUSD", "--base", "PLAT", "--quote", "DUSD", "--tick", "0.01", "--lot", "0.01", "--min-notional", "1", "--json"],
        { ...env, SHARDLINE_LEDGER_RPC_URL: "http://user:secret@127.0.0.1:9/" }),
      cli(["markets", "add", "--base", "PLAT", "--quote", "PALL", "--tick", "0.01", "--lot", "0.01", "--min-notional", "1", "--property", "77", "--json"],
        { ...env, SHARDLINE_LEDGER_RPC_URL: "http://user:secret@127.0.0.1:9/" })
    ])
    expect(refused(finer)).toMatch(/finer than one satoshi of DUSD: their decimals must add up to at most 8/)
    expect(refused(duplicate)).toBe("market GOLDDUSD already exists")
    expect(refused(mismatch)).toMatch(/symbol GOLDDUSD is not SHRD\+DUSD/)
    expect(refused(realNode)).toMatch(/asset PLAT is not registered; the ledger is a real node \(SHARDLINE_LEDGER_RPC_URL is set\), so give its Omni property id with --property ID/)
    expect(realNode.stderr).not.toContain("secret")
    expect(refused(realNodeBoth)).toMatch(/PLAT and PALL are both new; give --property CODE:ID for each/)
    // Nothing was issued or listed by the refusals.
    expect((await db.query("SELECT code FROM exchange_assets ORDER BY property_id")).map((r) => r["code"])).toEqual(["DUSD", "SHRD", "GOLD", "SILV"])
    const { markets } = json<{ markets: Array<MarketView> }>(await cli(["markets", "list", "--json"], env))
    expect(markets.map((m) => m.symbol)).toEqual(["SHRDDUSD", "GOLDDUSD", "SILVDUSD", "SHRDGOLD"])
  })

  it("demo trader: keys, authorizations, delegated addresses holding their caps; a later grant is funded too", { timeout: 240_000 }, async () => {
    const t = json<Trader>(await cli(["demo", "trader", "--fund", "GOLD:10,shrd:50", "--cap", "SHRD:20", "--expires-in", "1h", "--json"], env))
    expect(t.apiKey).toMatch(/^[A-Za-z0-9]{64}$/)
    expect(t.secretKey).toMatch(/^[A-Za-z0-9]{64}$/)
    expect(t.address).toMatch(/^T/)
    const byAsset = Object.fromEntries(t.authorizations.map((a) => [a.asset, a]))
    expect(Object.keys(byAsset).sort()).toEqual(["DUSD", "GOLD", "SHRD", "SILV"])
    expect(byAsset["SHRD"]).toMatchObject({ cap: "20", funded: "20" })
    expect(byAsset["GOLD"]).toMatchObject({ cap: "10", funded: "10" })
    expect(byAsset["DUSD"]).toMatchObject({ cap: "100000", funded: "100000" })
    expect(byAsset["SILV"]).toMatchObject({ cap: "1000", funded: "1000" })
    // What the CLI promises: devnet balance of the delegated address is the cap as soon as it returns.
    expect(await balance(byAsset["SHRD"]!.delegatedAddress, "SHRD")).toBe("20")
    for (const a of t.authorizations) {
      expect(a.expiresAt).toBeGreaterThan(Date.now() + 3_500_000)
      expect(await held(a.delegatedAddress, a.asset)).toBe(a.cap)
    }
    // The wallet keeps what exceeded the cap; it is the user's address.
    expect(await held(t.address, "SHRD")).toBe("30")
    const account = (await (await signedGet(node.baseUrl, "/api/public/v1/account", t)).json()) as { addresses?: Array<string>; authorizations: Array<{ asset: string }> }
    expect(JSON.stringify(account)).toContain(t.address)
    expect(account.authorizations.map((a) => a.asset).sort()).toEqual(["DUSD", "GOLD", "SHRD", "SILV"])
    // The key is stored sealed.
    const [wallet] = await db.query<{ address: string; key_enc: string }>("SELECT address, key_enc FROM demo_wallets WHERE user_id = $1", [t.userId])
    expect(wallet).toMatchObject({ address: t.address, key_enc: expect.stringMatching(/^v1:/) })

    // A second trader with the defaults: every market asset, caps = the funded amounts.
    const second = json<Trader>(await cli(["demo", "trader", "--json"], env))
    expect(second.authorizations.find((a) => a.asset === "SHRD")).toMatchObject({ cap: "10000", funded: "10000" })
    expect(second.userId).not.toBe(t.userId)

    // A later grant of the first trader (SHRD again: it replaces the first) is funded from the wallet's 30.
    const grant = await cli(["authorizations", "grant", "--key", t.apiKey, "--asset", "SHRD", "--cap", "25", "--expires-in", "1h", "--json"], env)
    const granted = json<{ delegatedAddress: string; cap: string; funded: { txid: string; balance: string } }>(grant)
    expect(granted.funded.balance).toBe("25")
    expect(granted.funded.txid).toMatch(/^[0-9a-f]{64}$/)
    expect(await balance(granted.delegatedAddress, "SHRD")).toBe("25")
    // 30 − 25 = 5 left in the wallet, plus the 20 the replaced grant's delegated address held: the
    // replacement sweeps it back to the user's own address before its key is destroyed.
    const deadline = Date.now() + 60_000
    while ((await held(t.address, "SHRD")) !== "25" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500))
    expect(await held(t.address, "SHRD")).toBe("25")
  })

  it("demo trader refuses a real ledger, an unknown asset and a bad amount", { timeout: 120_000 }, async () => {
    const [real, unknown, badAmount, tooPrecise] = await Promise.all([
      cli(["demo", "trader", "--json"], { ...env, SHARDLINE_LEDGER_RPC_URL: "http://user:secret@127.0.0.1:9/" }),
      cli(["demo", "trader", "--fund", "DOGE:5", "--json"], env),
      cli(["demo", "trader", "--cap", "SHRD:-1", "--json"], env),
      cli(["demo", "trader", "--fund", "SHRD:0.000000001", "--json"], env)
    ])
    expect(refused(real)).toBe("demo trader refused: the ledger is a real node (SHARDLINE_LEDGER_RPC_URL is set); it works on the ledger devnet only")
    expect(refused(unknown)).toMatch(/--fund: DOGE is not a market asset \(SHRD, DUSD, GOLD, SILV\)/)
    expect(refused(badAmount)).toMatch(/--cap SHRD:-1: invalid cap/)
    expect(refused(tooPrecise)).toMatch(/at most 8 decimal places/)
  })

  it("a restart re-issues every registered asset with its property id; a registry that does not match stops the node", { timeout: 240_000 }, async () => {
    // The same data dir: it holds the node's key epochs, which open the live grants' keys.
    const restartVars = { ...nodeVars, SHARDLINE_DATA_DIR: node.config.dataDir }
    await node.stop()
    node = await startNode(db.url, restartVars)
    expect(await devnetProperties(node)).toMatchObject({ 3: "Devnet Dollar", 4: "SHRD", 5: "GOLD", 6: "SUSD", 7: "XUSD", 8: "wBTC", 9: "wETH", 10: "wLTC", 11: "SILV" })
    expect((await db.query("SELECT count(*)::int AS n FROM markets"))[0]).toEqual({ n: 4 })
    // The restarted devnet serves the assets (and a new trader) at once.
    const t = json<Trader>(await cli(["demo", "trader", "--fund", "SILV:3", "--json"], env))
    const silv = t.authorizations.find((a) => a.asset === "SILV")!
    expect(await held(silv.delegatedAddress, "SILV")).toBe("3")

    // A row the devnet cannot give back its id (2 is never a managed property): refused at start.
    await node.stop()
    await db.query("INSERT INTO exchange_assets (code, property_id, decimals) VALUES ('BAD', 2, 8)")
    await expect(startNode(db.url, restartVars)).rejects.toThrow(/exchange_assets does not match the ledger devnet: BAD is property 2/)
    await db.query("DELETE FROM exchange_assets WHERE code = 'BAD'")
    node = await startNode(db.url, restartVars)
  })
})
