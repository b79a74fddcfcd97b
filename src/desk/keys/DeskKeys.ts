// The node's view of desk keys for authentication: a per-node cache over desk_api_keys
// (src/platform/CredentialCache.ts: no database round trip in steady state, a revocation seen by
// every node within 2 s).
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import type { DeskCaller } from "../../../schemas/desk/security.ts"
import { sha256Hex } from "../../crypto/token.ts"
import { type CredentialsUnavailable, makeCredentialCache } from "../../platform/CredentialCache.ts"
import { isKeyShaped, loadCaller } from "./DeskKeyStore.ts"

export interface DeskKeysShape {
  /** The caller of a live key; none for a key that is malformed, unknown or revoked. */
  readonly caller: (apiKey: string) => Effect.Effect<Option.Option<DeskCaller>, CredentialsUnavailable>
  /** Drops a revoked key from this node's cache now (the other nodes' polls drop it within 2 s). */
  readonly forget: (keyHash: string) => void
}

export class DeskKeys extends Context.Tag("shardline/desk/DeskKeys")<DeskKeys, DeskKeysShape>() {}

export const layer = Layer.scoped(DeskKeys, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cache = yield* makeCredentialCache({ name: "desk keys", table: "desk_api_keys", hashColumn: "key_hash", load: loadCaller(sql) })
  return DeskKeys.of({
    // Anything but 64 base62 characters cannot be a key: no hashing, no lookup.
    caller: (apiKey) => (isKeyShaped(apiKey) ? cache.get(sha256Hex(apiKey)) : Effect.succeed(Option.none())),
    forget: cache.forget
  })
}))
