// The Devnet entity, one per chain (ledger, ethereum, base, bsc), registered on every node: the
// way a CLI process reaches the devnets that live inside the running node. A thin shell around
// DevnetChains; what it adds is the payment record, so a redelivered Pay answers its txid
// instead of paying twice (the txid is committed before the reply). The same table records the
// other devnet-only writes by request id: `issue:<CODE>` (IssueAsset: the creating txid, so a
// retried `markets add` finds the property instead of issuing another) and
// `fund-demo:<requestId>` (FundDemo).
// Read your own writes: a ledger block it mines (Mine, FundDemo) is in this node's Omni view
// before it answers, so the account and the Market see what the CLI has just reported.
import { Entity } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { Effect, Metric, Schema } from "effect"
import { Devnet, DevnetChainName, DevnetRefused } from "../../../schemas/devnet.ts"
import { OmniView } from "../ledger/OmniView.ts"
import { entityActivations, entityDefects } from "../Metrics.ts"
import * as DevnetChains from "./DevnetChains.ts"
import { LedgerRegistry } from "../ledger/LedgerRegistry.ts"
import { assetIssuerWallet } from "../ledger/SystemWallet.ts"

/** What a node registers; DevnetChains comes from the node's services (the demo world uses the same one). */
export const layer = Devnet.toLayer(Effect.gen(function*() {
  const address = yield* Entity.CurrentAddress
  const sql = yield* SqlClient.SqlClient
  const chains = yield* DevnetChains.DevnetChains
  const registry = yield* LedgerRegistry
  const view = yield* OmniView
  const tagged = <A, E, R>(e: Effect.Effect<A, E, R>) => Effect.tagMetrics(e, "type", "Devnet")
  yield* tagged(Metric.increment(entityActivations))
  const chainOf = Schema.decodeUnknown(DevnetChainName)(address.entityId).pipe(
    Effect.mapError(() => new DevnetRefused({ message: `no devnet chain "${address.entityId}": one of ${DevnetChainName.literals.join(", ")}` }))
  )
  const ledgerOnly = (what: string) =>
    Effect.flatMap(chainOf, (chain) =>
      chain === "ledger" ? Effect.void : Effect.fail(new DevnetRefused({ message: `${what} is for the ledger devnet, not ${chain}` })))
  // The block just mined is in this node's view before the answer goes out; a view that cannot
  // reach the ledger makes the command fail (it must not say funded before an order can use it).
  const viewHasIt = Effect.mapError(view.current, (e) => new DevnetRefused({ message: `${e.message}; the block is mined but this node cannot see it yet` }))
  const guarded = <A, R>(effect: Effect.Effect<A, DevnetRefused, R>) => effect.pipe(Effect.tapDefect(() => tagged(Metric.increment(entityDefects))))

  return Devnet.of({
    Pay: ({ payload }) =>
      guarded(Effect.gen(function*() {
        const chain = yield* chainOf
        const recorded = yield* sql<{ txid: string }>`SELECT txid FROM devnet_payments WHERE request_id = ${payload.requestId}`.pipe(Effect.orDie)
        if (recorded[0] !== undefined) return { txid: recorded[0].txid }
        const txid = yield* chains.pay(chain, payload.to, payload.amount, payload.asset)
        yield* sql`INSERT INTO devnet_payments (request_id, chain, txid) VALUES (${payload.requestId}, ${chain}, ${txid})
          ON CONFLICT (request_id) DO NOTHING`.pipe(Effect.orDie)
        yield* Effect.logInfo("devnet pay").pipe(Effect.annotateLogs({ chain, txid, amount: payload.amount, asset: payload.asset ?? "native" }))
        return { txid }
      })),
    Mine: ({ payload }) =>
      guarded(Effect.gen(function*() {
        const chain = yield* chainOf
        const height = yield* chains.mine(chain, payload.blocks)
        if (chain === "ledger") yield* viewHasIt
        return { chain, height }
      })),
    Balance: ({ payload }) =>
      guarded(Effect.gen(function*() {
        const chain = yield* chainOf
        return { balance: yield* chains.balance(chain, payload.address, payload.asset) }
      })),
    IssueAsset: ({ payload }) =>
      guarded(Effect.gen(function*() {
        yield* ledgerOnly("IssueAsset")
        const code = payload.code
        // A market asset (the asset issuer's) registered under this very code.
        const known = (yield* Effect.orDie(registry.registered)).find((a) => a.code === code && (a.issuer ?? assetIssuerWallet) === assetIssuerWallet)
        if (known !== undefined) return { code, propertyId: known.propertyId, issued: false }
        // Issued before on this devnet but not registered yet (the CLI stopped in between): that one.
        const recordId = `issue:${code}`
        const [before] = yield* sql<{ txid: string }>`SELECT txid FROM devnet_payments WHERE request_id = ${recordId}`.pipe(Effect.orDie)
        const again = before === undefined ? undefined : yield* chains.propertyCreatedBy(before.txid, code)
        if (again !== undefined) return { code, propertyId: again, issued: true }
        const { propertyId, txid } = yield* chains.issueAsset(code)
        yield* sql`INSERT INTO devnet_payments (request_id, chain, txid) VALUES (${recordId}, 'ledger', ${txid})
          ON CONFLICT (request_id) DO UPDATE SET txid = EXCLUDED.txid, created_at = now()`.pipe(Effect.orDie)
        yield* Effect.logInfo("devnet issue").pipe(Effect.annotateLogs({ code, propertyId, txid }))
        return { code, propertyId, issued: true }
      })),
    FundDemo: ({ payload }) =>
      guarded(Effect.gen(function*() {
        yield* ledgerOnly("FundDemo")
        const recordId = `fund-demo:${payload.requestId}`
        const [recorded] = yield* sql<{ txid: string }>`SELECT txid FROM devnet_payments WHERE request_id = ${recordId}`.pipe(Effect.orDie)
        if (recorded !== undefined) {
          // Answered before (the reply was lost): the same txid, and what the address holds now.
          const balance = yield* chains.balance("ledger", payload.to, payload.asset)
          return { txid: recorded.txid === "" ? null : recorded.txid, balance }
        }
        const funded = yield* chains.fundFromDemo(payload.userId, payload.to, payload.asset, payload.upTo)
        yield* viewHasIt
        yield* sql`INSERT INTO devnet_payments (request_id, chain, txid) VALUES (${recordId}, 'ledger', ${funded.txid ?? ""})
          ON CONFLICT (request_id) DO NOTHING`.pipe(Effect.orDie)
        yield* Effect.logInfo("devnet fund demo").pipe(Effect.annotateLogs({ userId: payload.userId, to: payload.to, asset: payload.asset, txid: funded.txid ?? "none" }))
        return funded
      }))
  })
}), { maxIdleTime: "2 minutes", concurrency: 1 })
