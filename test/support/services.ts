// Desk keys and social sessions made in a test database the way the CLI and the sign-in flow make
// them (same store functions, same tables, same secret box).
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { configFrom, testMasterKey } from "../../harness/config.ts"
import { createMemberWithKey, type NewDeskKey, revokeKey } from "../../src/desk/keys/DeskKeyStore.ts"
import { AppConfig } from "../../src/platform/Config.ts"
import { databaseLayer } from "../../src/platform/database/Database.ts"
import * as SecretBox from "../../src/platform/SecretBox.ts"
import { mintSession, revokeSession } from "../../src/social/sessions/SessionStore.ts"

/** Runs `effect` against the test database with the app's own connection (migrated) and secret box. */
export const runWithDb = <A, E>(databaseUrl: string, effect: Effect.Effect<A, E, SqlClient.SqlClient | SecretBox.SecretBox>) => {
  const config = configFrom({ SHARDLINE_DATABASE_URL: databaseUrl, SHARDLINE_MASTER_KEY: testMasterKey })
  const layer = SecretBox.layer.pipe(
    Layer.provideMerge(databaseLayer({ applicationName: "shardline:test" })),
    Layer.provide(Layer.succeed(AppConfig, config))
  )
  return Effect.runPromise(Effect.scoped(Effect.provide(effect, layer)))
}

export const createDeskKey = (databaseUrl: string, options: NewDeskKey) => runWithDb(databaseUrl, createMemberWithKey(options))
export const revokeDeskKey = (databaseUrl: string, apiKey: string) => runWithDb(databaseUrl, revokeKey(apiKey))

/** What wallet-exchange will do after a signed sign-in; a negative ttl makes an expired session. */
export const createSession = (databaseUrl: string, address: string, ttlMs?: number) => runWithDb(databaseUrl, mintSession(address, ttlMs))
export const revokeSocialSession = (databaseUrl: string, token: string) => runWithDb(databaseUrl, revokeSession(token))
