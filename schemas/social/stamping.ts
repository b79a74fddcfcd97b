// The Post entity's own retry of its stamps (docs/social.md, "Stamps that could not go out"): a
// post charged and written whose stamps could not all reach the ledger (ledger unreachable, fee
// sponsor short) sends the missing ones again on this durable timer, with backoff, until every
// required stamp is on the ledger.
import { DeliverAt } from "@effect/cluster"
import { DateTime, PrimaryKey, Schema } from "effect"

export class FinishStamps extends Schema.Class<FinishStamps>("Post/FinishStamps")({
  postId: Schema.String,
  /** 0 for the first retry; each failed attempt schedules attempt + 1, a later one. */
  attempt: Schema.Number,
  dueAtMs: Schema.Number
}) {
  [PrimaryKey.symbol]() {
    return `stamps:${this.postId}:${this.attempt}`
  }
  [DeliverAt.symbol]() {
    return DateTime.unsafeMake(this.dueAtMs)
  }
}
