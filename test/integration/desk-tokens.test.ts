// The desk's tokens on a devnet node: created by themselves on the first start as managed
// properties of the desk issuer (nothing granted), listed and changed with `desk tokens`, given
// back their property ids when the node restarts on a fresh devnet, and payable by code with
// `devnet pay | balance --asset` (paid backed: the backing into the desk's cold vault, then the
// desk issuer's grant).
import { Effect, Either } from "effect"
import { formatAmount } from "../../src/chain/units.ts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { UtxoLedger } from "../../src/chain/ledger/UtxoLedger.ts"
import { OmniIndexer } from "../../src/chain/omni/indexer.ts"
import { syncOnce } from "../../src/chain/ledger/follower.ts"
import { systemWallet } from "../../src/platform/ledger/SystemWallet.ts"
import { deskIssuerWallet } from "../../src/platform/devnet/DevnetChains.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { cli, cliJson, cliRefused } from "../support/cli.ts"
import { cliEnvOf, startNode, type RunningNode } from "../support/node.ts"
import { runWithDb } from "../support/services.ts"
import { makeWallet } from "../support/linkWallet.ts"
import { DeskWallets } from "../../src/desk/wallets/DeskWallets.ts"

let db: TestDatabase
let node: RunningNode
let env: Record<string, string>
const vars = { SHARDLINE_DEVNET_BLOCK_MS: "0" }

beforeAll(async () => {
  db = await createTestDatabase("desktokens")
  node = await startNode(db.url, vars)
  env = cliEnvOf(db.url, node)
}, 120_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

type Listed = { tokens: Array<Record<string, unknown> & { code: string; propertyId: number }> }

/** The node's devnet properties as our own indexer sees them: id → name, issuer, total. */
const properties = (n: RunningNode) =>
  n.run(Effect.gen(function*() {
    const ledger = yield* UtxoLedger
    const indexer = new OmniIndexer({ params: ledger.params })
    yield* syncOnce(ledger, indexer)
    return new Map(indexer.properties().map((p) => [p.id, { name: p.name, issuer: p.issuer, total: p.totalTokens }]))
  }))

describe("desk tokens", () => {
  it("a devnet's first start creates two dollar tokens and wBTC, wLTC, wETH as the desk issuer's managed properties", { timeout: 240_000 }, async () => {
    const listed = cliJson<Listed>(await cli(["desk", "tokens", "list", "--json"], env))
    expect(listed.tokens.map((t) => [t.code, t.kind, t.propertyId, t.live])).toEqual([
      ["SUSD", "dollar", 6, true], ["XUSD", "dollar", 7, true],
      ["wBTC", "wrapped", 8, true], ["wETH", "wrapped", 9, true], ["wLTC", "wrapped", 10, true]
    ])
    expect(listed.tokens[0]).toEqual({
      code: "SUSD", kind: "dollar", baseAsset: "USD", name: "Shardline Dollar", propertyId: 6, minAmount: "10", maxAmount: "1000000",
      mintFeeBps: 0, redeemFeeBps: 10, live: true
    })
    expect(listed.tokens[2]).toMatchObject({ code: "wBTC", baseAsset: "BTC", minAmount: "0.0001", wrapFeeBps: 10, unwrapFeeBps: 10, requiredConfirmations: 2 })
    const issuer = await runWithDb(db.url, systemWallet(deskIssuerWallet))
    const props = await properties(node)
    for (const t of listed.tokens) {
      // Created by the desk issuer, nothing granted yet: circulating supply 0.
      expect(props.get(t.propertyId)).toEqual({ name: t.code, issuer: issuer.address, total: 0n })
    }
    // devnet balance takes the codes, case-insensitively.
    expect(cliJson(await cli(["devnet", "balance", "--chain", "ledger", "--address", issuer.address, "--asset", "wbtc", "--json"], env))).toEqual({ balance: "0" })
  })

  it("devnet pay pays every desk token by code, backed: the backing into the desk's cold vault, then the issuer's grant", { timeout: 240_000 }, async () => {
    const cold = await node.run(Effect.map(DeskWallets, (w) => ({ ethereum: w.wallet("ethereum", "cold").address, btc: w.wallet("btc", "cold").address, ltc: w.wallet("ltc", "cold").address })))
    const balance = async (chain: string, address: string, asset?: string) =>
      cliJson<{ balance: string }>(await cli(["devnet", "balance", "--chain", chain, "--address", address, ...(asset === undefined ? [] : ["--asset", asset]), "--json"], env)).balance
    // Reads go in parallel (each is a CLI process); the payments stay one at a time, from one faucet.
    const [usdc, eth, btc, ltc] = await Promise.all([balance("ethereum", cold.ethereum, "USDC"), balance("ethereum", cold.ethereum), balance("btc", cold.btc), balance("ltc", cold.ltc)])
    const before = { usdc: usdc!, eth: eth!, btc: btc!, ltc: ltc! }
    const cases = [["SUSD", "12.5"], ["xusd", "1.23456789"], ["wBTC", "0.25"], ["wLTC", "3"], ["wETH", "0.5"]] as const
    const payees = cases.map(() => makeWallet().addresses.p2pkh)
    for (const [i, [code, amount]] of cases.entries()) {
      const paid = await cli(["devnet", "pay", "--chain", "ledger", "--to", payees[i]!, "--asset", code, "--amount", amount, "--json"], env)
      expect(paid.code, `${code}: ${paid.stderr}`).toBe(0)
      expect(cliJson<{ txid: string }>(paid).txid).toMatch(/^[0-9a-f]{64}$/)
    }
    await cli(["devnet", "mine", "--chain", "ledger", "--json"], env)
    await Promise.all([cli(["devnet", "mine", "--chain", "btc", "--json"], env), cli(["devnet", "mine", "--chain", "ltc", "--json"], env)])
    const paidBalances = await Promise.all(cases.map(([code], i) => balance("ledger", payees[i]!, code)))
    for (const [i, [code, amount]] of cases.entries()) expect(paidBalances[i], code).toBe(amount)
    // The backing landed in the cold vaults: 12.5 + 1.234568 USDC (rounded up to USDC's 6 decimals), 0.25 BTC, 3 LTC, 0.5 ETH.
    const units = (d: string) => BigInt(d.split(".")[0]! + (d.split(".")[1] ?? "").padEnd(18, "0"))
    const plus = (a: string, b: string) => Either.getOrThrow(formatAmount(units(a) + units(b), 18))
    const after = await Promise.all([balance("ethereum", cold.ethereum, "USDC"), balance("ethereum", cold.ethereum), balance("btc", cold.btc), balance("ltc", cold.ltc)])
    expect(after).toEqual([plus(before.usdc, "13.734568"), plus(before.eth, "0.5"), plus(before.btc, "0.25"), plus(before.ltc, "3")])
    // The grant came from the desk issuer: the property's total is what was paid, and the faucet holds none.
    const props = await properties(node)
    expect(props.get(6)?.total).toBe(1_250_000_000n)
    expect(props.get(7)?.total).toBe(123_456_789n)
    const refused = await cli(["devnet", "pay", "--chain", "ledger", "--to", "not-an-address", "--asset", "SUSD", "--amount", "1", "--json"], env)
    expect(refused.code).not.toBe(0)
    expect(cliRefused(refused)).toContain("not-an-address")
  })

  it("desk tokens set changes limits, fees, confirmations and the live flag; bad input is refused in one line", { timeout: 240_000 }, async () => {
    const set = cliJson(await cli(["desk", "tokens", "set", "--code", "xusd", "--min", "50", "--max", "5000.5", "--mint-fee-bps", "7", "--redeem-fee-bps", "30", "--live", "false", "--json"], env))
    expect(set).toEqual({
      code: "XUSD", kind: "dollar", baseAsset: "USD", name: "Shardline Partner Dollar", propertyId: 7, minAmount: "50", maxAmount: "5000.5",
      mintFeeBps: 7, redeemFeeBps: 30, live: false
    })
    expect((await db.query("SELECT min_base::text AS min, fee_out_bps, live FROM desk_tokens WHERE code = 'XUSD'"))[0]).toEqual({ min: "5000000000", fee_out_bps: 30, live: false })
    expect(cliJson(await cli(["desk", "tokens", "set", "--code", "wLTC", "--confirmations", "12", "--json"], env))).toMatchObject({ requiredConfirmations: 12 })
    const refusals = await Promise.all([
      cli(["desk", "tokens", "set", "--code", "NOPE", "--live", "true"], env),
      cli(["desk", "tokens", "set", "--code", "SUSD", "--wrap-fee-bps", "5"], env),
      cli(["desk", "tokens", "set", "--code", "SUSD", "--redeem-fee-bps", "10001"], env),
      cli(["desk", "tokens", "set", "--code", "SUSD", "--min", "2000000"], env),
      cli(["desk", "tokens", "set", "--code", "SUSD", "--min", "0.000000001"], env),
      cli(["desk", "tokens", "set", "--code", "wBTC", "--confirmations", "0"], env),
      cli(["desk", "tokens", "set", "--code", "SUSD", "--live", "maybe"], env)
    ])
    expect(refusals.map((r) => r.code)).toEqual([2, 2, 2, 2, 2, 2, 2])
    expect(refusals.map(cliRefused)).toEqual([
      expect.stringMatching(/^no desk token NOPE/),
      expect.stringMatching(/--wrap-fee-bps is not a setting of dollar token SUSD/),
      expect.stringMatching(/--redeem-fee-bps must be an integer from 0 to 10000/),
      expect.stringMatching(/the maximum \(1000000\) is below the minimum \(2000000\)/),
      expect.stringMatching(/--min: .*decimal places/),
      expect.stringMatching(/--confirmations must be an integer from 1 to 1000/),
      expect.stringMatching(/--live must be true or false/)
    ])
    // Nothing the refusals touched changed.
    expect((await db.query("SELECT fee_out_bps, min_base::text AS min FROM desk_tokens WHERE code = 'SUSD'"))[0]).toEqual({ fee_out_bps: 10, min: "1000000000" })
  })

  it("a restart on a fresh devnet gives every token its property id back, issued by the desk issuer", { timeout: 240_000 }, async () => {
    await node.stop()
    node = await startNode(db.url, { ...vars, SHARDLINE_DATA_DIR: node.config.dataDir })
    const props = await properties(node)
    const issuer = await runWithDb(db.url, systemWallet(deskIssuerWallet))
    expect([6, 7, 8, 9, 10].map((id) => [props.get(id)?.name, props.get(id)?.issuer])).toEqual(
      ["SUSD", "XUSD", "wBTC", "wETH", "wLTC"].map((code) => [code, issuer.address])
    )
    expect(props.get(4)?.name).toBe("SHRD")
    expect(cliJson<Listed>(await cli(["desk", "tokens", "list", "--json"], env)).tokens.map((t) => t.propertyId)).toEqual([6, 7, 8, 9, 10])
  })
})
