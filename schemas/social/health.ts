// Node health (spec: GET /api/public/<chain>-health). The chain slug is the ledger's own name,
// `ledgerParams.name` in src/chain/params.ts ("ledger"); schemas import no src, so the slug is
// written here and test/integration/http-social.test.ts checks the two agree.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { OpenCors } from "../common/OpenCors.ts"
import { Weight } from "../common/Weight.ts"

export const chainSlug = "ledger" as const

export const Health = Schema.Struct({
  chain: Schema.String,
  height: Schema.Int.annotations({ description: "Tip block height" }),
  tipHash: Schema.optional(Schema.String).annotations({ description: "Tip block hash, hex" }),
  kind: Schema.Literal("devnet", "rpc").annotations({ description: "An in-process devnet, or a real node over JSON-RPC" }),
  hotWallet: Schema.Struct({
    address: Schema.String,
    balance: Schema.NullOr(Schema.String).annotations({ description: "Coins, decimal; null until first read" })
  }).annotations({ description: "The wallet that pays for stamps (the fee sponsor)" }),
  topUpAddress: Schema.String.annotations({ description: "Members pay here to top up their on-service balance" })
})
export type Health = typeof Health.Type

export const HealthGroup = HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("health", `/api/public/${chainSlug}-health`).addSuccess(Health)
    .annotate(Weight, 1)
    .annotate(OpenApi.Summary, "Node health: the ledger's tip (no key, any origin, weight 1)"))
  .middleware(OpenCors)
  .annotate(OpenApi.Title, "Health")
