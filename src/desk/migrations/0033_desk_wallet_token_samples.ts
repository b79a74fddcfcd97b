import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Rewards sample the desk's own dollar tokens (issue 23.10): a LinkedWallet sample keeps its
// total in linked_wallet_samples and, here, what each sampled token (Omni property) added to it,
// so the rewards balance answers per token and in total. Rows go with their sample.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE desk_wallet_token_samples (
    member_id UUID NOT NULL,
    slot_at TIMESTAMPTZ NOT NULL,
    property_id BIGINT NOT NULL CHECK (property_id > 0),
    balance_base NUMERIC(40, 0) NOT NULL CHECK (balance_base >= 0),
    PRIMARY KEY (member_id, slot_at, property_id),
    FOREIGN KEY (member_id, slot_at) REFERENCES linked_wallet_samples (member_id, slot_at) ON DELETE CASCADE
  )`
})
