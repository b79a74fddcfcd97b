// Creates API keys in a test database the way the CLI does (same tables, same secret box).
import { Effect, Layer } from "effect"
import { ApiKeys, layerNoListen as apiKeysLayer, type Scope } from "../src/exchange/auth/ApiKeys.ts"
import { configLayer } from "../src/config.ts"
import { databaseLayer } from "../src/platform/database/Database.ts"
import { migrations } from "../src/migrations.ts"
import * as SecretBox from "../src/platform/SecretBox.ts"
import { configFrom, testMasterKey } from "./config.ts"

export const createKey = (databaseUrl: string, options: { scopes: ReadonlyArray<Scope>; ipAllowlist?: ReadonlyArray<string>; addresses?: ReadonlyArray<string>; userId?: number }) => {
  const config = configFrom({ SHARDLINE_DATABASE_URL: databaseUrl, SHARDLINE_MASTER_KEY: testMasterKey })
  const layer = apiKeysLayer.pipe(
    Layer.provideMerge(SecretBox.layer),
    Layer.provideMerge(databaseLayer({ applicationName: "shardline:test", migrations })),
    Layer.provide(configLayer(config))
  )
  return Effect.runPromise(Effect.scoped(Effect.provide(Effect.flatMap(ApiKeys, (k) => k.create(options)), layer)))
}
