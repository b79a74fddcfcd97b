import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Social accounts (spec: "an account is a chain address, optionally with an @handle and always
// with a 6-character asset ID written #ABC123"). The identity address is the key; the linked
// wallet's account-level xpub (wallet link v1) is where posting addresses are derived from; the
// on-service balance pays for writing actions, in the ledger coin's base units (never a float).
// Written once here so the wallet-identity and social-content work extend one table.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE social_accounts (
    address TEXT PRIMARY KEY,
    asset_id TEXT NOT NULL UNIQUE CHECK (asset_id ~ '^[A-Z0-9]{6}$'),
    handle TEXT UNIQUE CHECK (handle ~ '^[a-z0-9_]{1,30}$'),
    xpub TEXT,
    xpub_path TEXT,
    balance_base BIGINT NOT NULL DEFAULT 0 CHECK (balance_base >= 0),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
})
