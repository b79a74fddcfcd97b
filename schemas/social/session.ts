// GET /api/public/v1/session (ours): who the bearer session is, until when.
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Weight } from "../common/Weight.ts"
import { SessionAuth } from "./security.ts"

export const SessionView = Schema.Struct({
  address: Schema.String,
  expiresAt: Schema.String.annotations({ description: "ISO 8601" })
})
export type SessionView = typeof SessionView.Type

export const SessionGroup = HttpApiGroup.make("session")
  .add(HttpApiEndpoint.get("session", "/api/public/v1/session").addSuccess(SessionView)
    .annotate(Weight, 1)
    .annotate(OpenApi.Summary, "The signed-in address and when the session ends (session token, weight 1)"))
  .middleware(SessionAuth)
  .annotate(OpenApi.Title, "Session")
