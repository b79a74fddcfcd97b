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
    // dueAtMs too: a post may need its stamps finished more than once (a publish, later a takedown
    // or a comment), each time from attempt 0, and a processed key would never be delivered again.
    return `stamps:${this.postId}:${this.attempt}:${this.dueAtMs}`
  }
  [DeliverAt.symbol]() {
    return DateTime.unsafeMake(this.dueAtMs)
  }
}
