// The Omni properties the services registered on the ledger (code, property id, issuer): what a
// devnet command's `--asset` may name, and what a ledger devnet re-issues at start so each gets
// its id back. The platform knows no service and reads none of their tables: each service that
// registers properties gives its list (the exchange its market assets, the desk its tokens) and
// the node puts the lists together here.
import { SqlClient, type SqlError } from "@effect/sql"
import { Context, Effect, Layer } from "effect"

/**
 * A registered Omni property: its code and id, the system wallet that issues it (unset: the asset
 * issuer), and whether its supply is granted to the faucet at issue (market assets) or left for
 * the issuer to grant (the desk's tokens, whose circulating supply is what the desk itself granted).
 */
export interface RegisteredAsset {
  readonly code: string
  readonly propertyId: number
  readonly issuer?: string
  readonly grantToFaucet?: boolean
}

/** One service's registered properties. */
export type RegisteredList = Effect.Effect<ReadonlyArray<RegisteredAsset>, SqlError.SqlError, SqlClient.SqlClient>

export interface LedgerRegistryShape {
  /** Every service's registered properties, in no particular order. */
  readonly registered: Effect.Effect<ReadonlyArray<RegisteredAsset>, SqlError.SqlError>
}

export class LedgerRegistry extends Context.Tag("shardline/LedgerRegistry")<LedgerRegistry, LedgerRegistryShape>() {}

export const layer = (...lists: ReadonlyArray<RegisteredList>): Layer.Layer<LedgerRegistry, never, SqlClient.SqlClient> =>
  Layer.effect(LedgerRegistry, Effect.map(SqlClient.SqlClient, (sql) => ({
    registered: Effect.map(Effect.all(lists), (each) => each.flat()).pipe(Effect.provideService(SqlClient.SqlClient, sql))
  })))
