// This test process as a storage-only cluster client (like the CLI), with API keys: it sends
// persisted messages to entities through cluster storage, whichever node owns them.
import { Layer } from "effect"
import { storageClient } from "../cluster/topology.ts"
import * as ApiKeys from "../src/exchange/auth/ApiKeys.ts"
import { configLayer } from "../src/config.ts"
import { databaseLayer } from "../src/platform/database/Database.ts"
import { migrations } from "../src/migrations.ts"
import * as SecretBox from "../src/platform/SecretBox.ts"
import { configFrom, testMasterKey } from "./config.ts"

export const clusterClientLayer = (databaseUrl: string, applicationName: string) => {
  const config = configFrom({ SHARDLINE_DATABASE_URL: databaseUrl, SHARDLINE_MASTER_KEY: testMasterKey })
  return Layer.mergeAll(ApiKeys.layer, storageClient(config)).pipe(
    Layer.provideMerge(SecretBox.layer),
    Layer.provideMerge(databaseLayer({ applicationName, migrations })),
    Layer.provideMerge(configLayer(config)),
    Layer.orDie
  )
}
