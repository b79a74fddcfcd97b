// A desk node on a real token ledger (litecoind over JSON-RPC), as an operator readies it: the
// fee sponsor and the desk issuer get coins (and any other address the test names), the issuer
// creates the desk token `code` as a managed property and the registry names it, live.
import { Effect } from "effect"
import type { UtxoLedgerShape } from "../../src/chain/ledger/UtxoLedger.ts"
import { makeKeyWallet } from "../../src/chain/ledger/keyWallet.ts"
import { ledgerParams } from "../../src/chain/params.ts"
import { deskIssuerWallet } from "../../src/platform/devnet/DevnetChains.ts"
import { systemWallet } from "../../src/platform/ledger/SystemWallet.ts"
import type { TestDatabase } from "../../harness/db.ts"
import { randomLedgerKey } from "../../harness/walletServices.ts"
import type { omniChainIndex } from "./omniChainIndex.ts"
import { issueManaged } from "./faults.ts"
import { runWithDb } from "./services.ts"
import { waitFor } from "./waitFor.ts"

export const readyDeskToken = async (db: TestDatabase, ledger: UtxoLedgerShape, chain: ReturnType<typeof omniChainIndex>, code: string, alsoFund: ReadonlyArray<string> = []) => {
  const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)
  const burn = randomLedgerKey().address
  const sponsor = await waitFor("the fee sponsor's wallet", 30_000, async () =>
    (await db.query<{ address: string }>(`SELECT address FROM system_wallets WHERE name = 'fee-sponsor'`))[0]?.address)
  await waitFor("the desk's token registry", 30_000, async () =>
    (await db.query(`SELECT 1 FROM desk_tokens WHERE code = $1`, [code])).length > 0 ? true : undefined)
  const issuer = await runWithDb(db.url, systemWallet(deskIssuerWallet))
  for (const to of [sponsor, sponsor, issuer.address, ...alsoFund]) await run(ledger.mine(1, to))
  await run(ledger.mine(ledgerParams.coinbaseMaturity, burn))
  const issuerWallet = makeKeyWallet(ledger, issuer.privateKey)
  const property = await issueManaged(ledger, issuerWallet, chain, burn, code)
  await db.query(`UPDATE desk_tokens SET property_id = $1, live = true WHERE code = $2`, [property, code])
  return { issuer, issuerWallet, property, burn }
}
