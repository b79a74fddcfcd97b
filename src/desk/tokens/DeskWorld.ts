// The desk's tokens at node start: the default registry rows when missing (every node), and on
// a ledger devnet each registered token without a property is issued by the desk issuer
// (DevnetChains.issueDeskToken: a managed property, nothing granted) and made live. Tokens
// issued before come back at every devnet start with the market assets (DevnetChains
// re-issues both registries together in id order). On a real ledger nothing is issued: the
// operator names each property with `desk tokens set --code C --property ID`.
// Runs after the exchange's demo world, under the same lock (cluster/Node.ts sequences them).
import type { SqlClient } from "@effect/sql"
import { type ConfigError, Effect } from "effect"
import { AppConfig } from "../../platform/Config.ts"
import { invalidSetting } from "../../platform/settings.ts"
import { DevnetChains } from "../../platform/devnet/DevnetChains.ts"
import { realNodeSetting } from "../../platform/devnet/realNode.ts"
import { withDevnetWorldLock } from "../../platform/devnet/worldLock.ts"
import { listTokens, registerDefaults, saveToken } from "./tokenStore.ts"

export const makeDeskWorld: Effect.Effect<void, ConfigError.ConfigError, AppConfig | SqlClient.SqlClient | DevnetChains> = Effect.gen(function*() {
  const config = yield* AppConfig
  const added = yield* registerDefaults
  if (realNodeSetting(config, "ledger") !== undefined) {
    if (added > 0) yield* Effect.logInfo(`desk: registered ${added} token(s); name their Omni properties with desk tokens set --property`)
    return
  }
  const chains = yield* DevnetChains
  yield* withDevnetWorldLock(Effect.gen(function*() {
    // Tokens another node registered since this node's demo world re-issued: issue them here too.
    yield* chains.reissueAssets.pipe(Effect.catchTag("AssetsMismatch", (e) =>
      Effect.fail(invalidSetting("LEDGER_RPC_URL", `unset, so the ledger is an in-process devnet, but ${e.message}`))))
    const issued: Array<string> = []
    for (const token of yield* listTokens) {
      if (token.propertyId !== null) continue
      const { propertyId } = yield* chains.issueDeskToken(token.code)
      yield* saveToken({ ...token, propertyId, live: true })
      issued.push(`${token.code} = ${propertyId}`)
    }
    if (issued.length > 0) yield* Effect.logInfo(`desk: issued ${issued.join(", ")} on the ledger devnet`)
  }))
}).pipe(Effect.catchTags({ SqlError: Effect.die, DevnetRefused: Effect.die }))
