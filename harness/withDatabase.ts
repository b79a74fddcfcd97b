// Runs an effect against a test database with the pieces the CLI has (SqlClient, the secret box
// under the shared test master key, the default config): for tests and benches that make rows the
// way the CLI and the sign-in flow make them.
import type { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { configLayer, type NodeConfigs } from "../src/config.ts"
import { databaseLayer } from "../src/platform/database/Database.ts"
import { migrations } from "../src/migrations.ts"
import * as SecretBox from "../src/platform/SecretBox.ts"
import { configFrom, testMasterKey } from "./config.ts"

export const runWithDatabase = <A, E>(databaseUrl: string, effect: Effect.Effect<A, E, SqlClient.SqlClient | SecretBox.SecretBox | NodeConfigs>) => {
  const config = configFrom({ SHARDLINE_DATABASE_URL: databaseUrl, SHARDLINE_MASTER_KEY: testMasterKey })
  const layer = SecretBox.layer.pipe(
    Layer.provideMerge(databaseLayer({ applicationName: "shardline:test", migrations })),
    Layer.provideMerge(configLayer(config))
  )
  return Effect.runPromise(Effect.scoped(Effect.provide(effect, layer)))
}
