// The Devnet entity, one per chain (ledger, ethereum, base, bsc), registered on every node: the
// way a CLI process reaches the devnets that live inside the running node. A thin shell around
// DevnetChains; what it adds is the payment record, so a redelivered Pay answers its txid
// instead of paying twice (the txid is committed before the reply).
import { Entity } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Metric, Schema } from "effect"
import { Devnet, DevnetChainName, DevnetRefused } from "../../../schemas/devnet.ts"
import { entityActivations, entityDefects } from "../Metrics.ts"
import * as DevnetChains from "./DevnetChains.ts"

export const DevnetEntity = Devnet.toLayer(Effect.gen(function*() {
  const address = yield* Entity.CurrentAddress
  const sql = yield* SqlClient.SqlClient
  const chains = yield* DevnetChains.DevnetChains
  const tagged = <A, E, R>(e: Effect.Effect<A, E, R>) => Effect.tagMetrics(e, "type", "Devnet")
  yield* tagged(Metric.increment(entityActivations))
  const chainOf = Schema.decodeUnknown(DevnetChainName)(address.entityId).pipe(
    Effect.mapError(() => new DevnetRefused({ message: `no devnet chain "${address.entityId}": one of ledger, ethereum, base, bsc` }))
  )
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
        return { chain, height: yield* chains.mine(chain, payload.blocks) }
      })),
    Balance: ({ payload }) =>
      guarded(Effect.gen(function*() {
        const chain = yield* chainOf
        return { balance: yield* chains.balance(chain, payload.address, payload.asset) }
      }))
  })
}), { maxIdleTime: "2 minutes", concurrency: 1 })

/** The entity with its service: what a node registers (needs the chains, SQL and sharding). */
export const DevnetLive = DevnetEntity.pipe(Layer.provide(DevnetChains.layer))
