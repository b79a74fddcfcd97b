// A market on a running node's ledger devnet, and traders that can use it: an Omni property issued
// from the devnet faucet, the exchange_assets and markets rows (announced with pg_notify, as
// `markets add` does), API keys with their own addresses, authorizations granted through the real
// CLI, and their delegated addresses funded on chain until the node's account shows the funds.
import { expect } from "vitest"
import { devnetDollar } from "../../src/chain/ledger/devnetFaucet.ts"
import { fundOmni, newAddress } from "./omniWorld.ts"
import type { TestDatabase } from "../../harness/db.ts"
import { createKey } from "../../harness/keys.ts"
import { signedGet, type Key } from "../../harness/signed.ts"
import { cli } from "./cli.ts"
import { type RunningNode, testMasterKey } from "./node.ts"

export const DUSD = { code: "DUSD", propertyId: devnetDollar.propertyId }

export { fundOmni, issueProperty, newAddress } from "./omniWorld.ts"

export interface MarketAsset {
  readonly code: string
  readonly propertyId: number
}

/** Lists a market as the `markets` table holds it; the node's registry picks it up from the notify. */
export const listMarket = async (db: TestDatabase, symbol: string, base: MarketAsset, quote: MarketAsset) => {
  await db.query(`INSERT INTO exchange_assets (code, property_id, decimals) VALUES ($1, $2, 8), ($3, $4, 8) ON CONFLICT DO NOTHING`, [base.code, base.propertyId, quote.code, quote.propertyId])
  await db.query(`INSERT INTO markets (id, symbol, base, quote, tick_size, step_size, min_price, max_price, min_qty, max_qty, min_notional, max_notional)
    VALUES ((SELECT coalesce(max(id), 0) + 1 FROM markets), $1, $2, $3, '0.01', '0.001', '0.01', '100000', '0.001', '100000', '1', '0')`, [symbol, base.code, quote.code])
  await db.query(`SELECT pg_notify('shardline_markets', $1)`, [symbol])
}

export type Trader = Key & { readonly userId: number; readonly address: string; readonly delegated: Record<string, string> }

const account = async (node: RunningNode, key: Key) => (await (await signedGet(node.baseUrl, "/api/public/v1/account", key)).json()) as {
  balances?: ReadonlyArray<{ asset: string; free: string; locked: string }>
}

type Funds = ReadonlyArray<{ readonly asset: MarketAsset; readonly amount: bigint }>

/**
 * One trader per `funds` list: a read+trade key with its own address, one authorization per entry
 * (granted through the CLI, cap = amount) and each delegated address funded with that amount on
 * chain; resolves once the node's account shows every amount free. The CLI grants run side by
 * side; the faucet pays one after the other (each payment spends its change).
 */
export const newTraders = async (node: RunningNode, db: TestDatabase, traders: ReadonlyArray<Funds>): Promise<Array<Trader>> => {
  const env = { SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey }
  const keys = await Promise.all(traders.map(async () => {
    const address = newAddress()
    return { ...(await createKey(db.url, { scopes: ["read", "trade"], addresses: [address] })), address }
  }))
  const granted = await Promise.all(traders.map((funds, i) =>
    Promise.all(funds.map(async ({ asset, amount }) => {
      const r = await cli(["authorizations", "grant", "--key", keys[i]!.apiKey, "--asset", asset.code, "--cap", String(amount), "--expires-in", "1h", "--json"], env)
      expect(r.stderr).toBe("")
      return [asset.code, (JSON.parse(r.stdout) as { delegatedAddress: string }).delegatedAddress] as const
    }))))
  for (const [i, funds] of traders.entries()) {
    for (const [j, { asset, amount }] of funds.entries()) await fundOmni(node, granted[i]![j]![1], asset.propertyId, amount * 10n ** 8n)
  }
  await Promise.all(traders.map(async (funds, i) => {
    for (const { asset, amount } of funds) {
      const free = `${amount}.00000000`
      for (let n = 0; ; n++) {
        const a = await account(node, keys[i]!)
        if (a.balances?.find((b) => b.asset === asset.code)?.free === free) break
        if (n === 100) throw new Error(`${asset.code} never became free ${free}: ${JSON.stringify(a)}`)
        await new Promise((r) => setTimeout(r, 100))
      }
    }
  }))
  return keys.map((key, i) => ({ ...key, delegated: Object.fromEntries(granted[i]!) }))
}
