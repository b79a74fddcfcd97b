import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Key destruction that holds (docs/runtime.md, "Key destruction"). None of these tables holds a
// key: the epoch ratchet lives in each node's <dataDir>/key-epochs, outside Postgres.
// - secret_box_check: one value sealed with the master key, opened at every start, so a node
//   given another master key refuses to start instead of failing every secret it reads later.
// - key_epoch_chain: which ratchet (chain id, public) the sealed delegated keys belong to.
// - key_epoch_transfers: a node without the ratchet asks a running node for it; the answer is
//   sealed to a one-time X25519 key that exists only in the asking process's memory.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE secret_box_check (
    id INT PRIMARY KEY CHECK (id = 1),
    sealed TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE key_epoch_chain (
    id INT PRIMARY KEY CHECK (id = 1),
    chain_id TEXT NOT NULL,
    period_ms INT NOT NULL CHECK (period_ms > 0),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE key_epoch_transfers (
    id TEXT PRIMARY KEY,
    requester TEXT NOT NULL,
    public_key TEXT NOT NULL,
    proof TEXT NOT NULL,
    responder_key TEXT,
    sealed TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
})
