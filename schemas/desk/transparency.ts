// Reserve transparency (spec: Transparency): keyless JSON any web page may read. Only the status
// route exists so far, and it says honestly what is not live yet.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { OpenCors } from "../common/OpenCors.ts"
import { Weight } from "../common/Weight.ts"

export const DeskStatus = Schema.Struct({
  service: Schema.Literal("token-desk"),
  status: Schema.Literal("ok"),
  serverTime: Schema.Number.annotations({ description: "Unix milliseconds" }),
  notYetLive: Schema.Array(Schema.String).annotations({
    description: "Parts of the spec this node does not serve yet (peg health, fees, limits, capacity and attestation fields come with them)"
  })
})
export type DeskStatus = typeof DeskStatus.Type

export const TransparencyGroup = HttpApiGroup.make("transparency")
  .add(HttpApiEndpoint.get("status", "/api/public/status").addSuccess(DeskStatus)
    .annotate(Weight, 1)
    .annotate(OpenApi.Summary, "System status (no key, any origin, weight 1)"))
  .middleware(OpenCors)
  .annotate(OpenApi.Title, "Transparency")
