import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Idempotency-Key of desk order creation (docs/desk-orders.md, "Retrying an order"): the first
// request with a key names the order it made for (API key, key); a retry with the same payload
// answers that order, another payload is 422. The DeskOrder entity writes the claim in the same
// transaction as the order's row (the entity is the only writer of its rows), so a claim exists
// exactly when its order does. Keys expire after 24 hours (platform/http/idempotencyKey.ts).
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE desk_order_idempotency (
    key_id UUID NOT NULL REFERENCES desk_api_keys (id),
    key TEXT NOT NULL,
    -- Checked at commit: the claim is written first, then its order, in one transaction.
    order_id UUID NOT NULL REFERENCES desk_orders (id) DEFERRABLE INITIALLY DEFERRED,
    fingerprint TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (key_id, key)
  )`
})
