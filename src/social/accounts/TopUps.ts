// The on-service balance's top-ups (issue 14: "topped up by ledger payments to the public top-up
// address, watched by the system"): every node looks at new ledger blocks once they are
// topUpConfirmations deep; an output paying the top-up address (the system wallet
// 'social-top-up') in a transaction whose first input was the account's identity address credits
// that account, once per txid (the primary key of social_topups decides between nodes). Payments
// from an address that is no account are not credited (logged).
import { SqlClient } from "@effect/sql"
import { Transaction, payments } from "bitcoinjs-lib"
import { Duration, Effect, Either, Layer, Schedule } from "effect"
import { UtxoLedger, type UtxoLedgerShape } from "../../chain/ledger/UtxoLedger.ts"
import { addressScript } from "../../chain/txBuilder.ts"
import { systemWallet } from "../../platform/ledger/SystemWallet.ts"

/** The system wallet whose address members pay to top up their on-service balance. */
export const topUpWalletName = "social-top-up"
/** Depth at which a top-up is credited (a reorg above it is not undone). */
export const topUpConfirmations = 3
/** How often a node looks for new blocks, ms; blocks looked at per round at most. */
export const topUpPollMs = 2_000
const blocksPerRound = 100

const addressOfScript = (script: Uint8Array, ledger: UtxoLedgerShape): string | undefined =>
  Either.getOrUndefined(Either.try(() => payments.p2pkh({ output: script, network: ledger.params.network }).address!))

/** One round: credits the top-ups of the blocks now deep enough; returns the height reached. */
export const scanTopUps = (topUpAddress: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ledger = yield* UtxoLedger
    const target = Either.getOrThrow(addressScript(topUpAddress, ledger.params))
    const targetHex = Buffer.from(target).toString("hex")
    const tip = yield* ledger.tip
    const upto = tip.height - (topUpConfirmations - 1)
    const [cursor] = yield* sql<{ height: number }>`SELECT height FROM social_topup_cursor WHERE id = 1`
    // A fresh system starts at the tip: the address is new, nothing older can pay it.
    if (cursor === undefined) {
      yield* sql`INSERT INTO social_topup_cursor (id, height) VALUES (1, ${Math.max(0, upto)}) ON CONFLICT (id) DO NOTHING`
      return upto
    }
    for (let h = cursor.height + 1; h <= Math.min(upto, cursor.height + blocksPerRound); h++) {
      const block = yield* ledger.blockAt(h)
      for (const hex of block.txs) {
        // A transaction that pays the address holds its script's bytes: the rest (a block of
        // settlement legs, on a ledger the exchange shares) is not parsed at all.
        if (!hex.includes(targetHex)) continue
        const tx = Transaction.fromHex(hex)
        const amount = tx.outs.filter((o) => Buffer.from(o.script).equals(Buffer.from(target))).reduce((n, o) => n + BigInt(o.value), 0n)
        if (amount === 0n || tx.ins[0] === undefined) continue
        const prev = Transaction.fromHex((yield* ledger.getTx(Buffer.from(tx.ins[0].hash).reverse().toString("hex"))).hex)
        const sender = addressOfScript(prev.outs[tx.ins[0].index]!.script, ledger)
        const txid = tx.getId()
        const credited = yield* Effect.gen(function*() {
          const [account] = sender === undefined ? [] : yield* sql<{ address: string }>`SELECT address FROM social_accounts WHERE COALESCE(identity_address, address) = ${sender}`
          if (account === undefined) return false
          const inserted = yield* sql`INSERT INTO social_topups (txid, account, amount_base, height) VALUES (${txid}, ${account.address}, ${amount.toString()}, ${h})
            ON CONFLICT (txid) DO NOTHING RETURNING 1`
          if (inserted.length > 0) yield* sql`UPDATE social_accounts SET balance_base = balance_base + ${amount.toString()} WHERE address = ${account.address}`
          return true
        }).pipe(sql.withTransaction)
        if (!credited) yield* Effect.logWarning(`top-up ${txid}: ${amount} base units from ${sender ?? "a non-P2PKH input"}, which is no social account; not credited`)
      }
      yield* sql`UPDATE social_topup_cursor SET height = GREATEST(height, ${h}) WHERE id = 1`
    }
    return upto
  })

/** Every node watches; the txid key makes each credit happen once. */
export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const topUp = yield* systemWallet(topUpWalletName).pipe(Effect.orDie)
  yield* scanTopUps(topUp.address).pipe(
    Effect.catchAll((e) => Effect.logWarning("social top-ups: ledger or database not answering; trying again", e)),
    Effect.repeat(Schedule.spaced(Duration.millis(topUpPollMs))),
    Effect.forkScoped
  )
}))
