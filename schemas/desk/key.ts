// GET /api/public/v1/key (ours, not the spec's): what the calling key is, so a partner can check
// its key, scopes and terms. Any scope.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Weight } from "../common/Weight.ts"
import { DeskKey, deskScopes } from "./security.ts"

export const prefix = "/api/public/v1" as const

export const KeyInfo = Schema.Struct({
  memberId: Schema.String,
  scopes: Schema.Array(Schema.Literal(...deskScopes)),
  feeBps: Schema.NullOr(Schema.Int).annotations({ description: "Negotiated redemption fee in basis points; null: the desk's default fee" }),
  callbackUrl: Schema.NullOr(Schema.String).annotations({ description: "Where order milestones are POSTed, signed with the key's signing secret" })
})
export type KeyInfo = typeof KeyInfo.Type

export const KeyGroup = HttpApiGroup.make("key")
  .add(HttpApiEndpoint.get("key", `${prefix}/key`).addSuccess(KeyInfo)
    .annotate(Weight, 1)
    .annotate(OpenApi.Summary, "The calling key's member, scopes, fee and callback URL (any scope, weight 1)"))
  .middleware(DeskKey)
  .annotate(OpenApi.Title, "Key")
