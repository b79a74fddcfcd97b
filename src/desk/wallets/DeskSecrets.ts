// The desk's own secrets (its HD seed, the attestation keys): one row each in desk_secrets,
// sealed with the master key (SecretBox), made by the first node that asks; the first insert
// wins (ON CONFLICT DO NOTHING, then read back), so nodes starting together agree on one value.
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { SecretBox } from "../../platform/SecretBox.ts"

export interface DeskSecret {
  readonly secret: string
  /** What may be shown: a fingerprint, a public key. */
  readonly public: string
}

/** The secret `name`, created with `make` on first use; the same value on every node and every call. */
export const deskSecret = (name: string, make: () => DeskSecret): Effect.Effect<DeskSecret, SqlError, SqlClient.SqlClient | SecretBox> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox
    const read = sql<{ sealed: string; public: string }>`SELECT sealed, public FROM desk_secrets WHERE name = ${name}`
    let [row] = yield* read
    if (row === undefined) {
      const fresh = make()
      yield* sql`INSERT INTO desk_secrets (name, sealed, public) VALUES (${name}, ${box.seal(fresh.secret)}, ${fresh.public})
        ON CONFLICT (name) DO NOTHING`
      ;[row] = yield* read
      if (row === undefined) return yield* Effect.dieMessage(`desk secret ${name}: inserted, then not found`)
    }
    return { secret: box.open(row.sealed), public: row.public }
  })
