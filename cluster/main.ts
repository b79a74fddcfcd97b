// `npm start`: the whole system in one process (or one node of a cluster when
// SHARDLINE_TOPOLOGY=socket). Configuration comes only from SHARDLINE_* variables.
import { Effect, Layer } from "effect"
import { nodeConfig } from "../src/config.ts"
import { exitOnConfigError } from "../src/platform/Config.ts"
import { databaseLost } from "../src/platform/database/EmbeddedDatabase.ts"
import { ListenFailed } from "../src/platform/http/Listener.ts"
import { runNodeMain, setStopSettings } from "../src/platform/NodeMain.ts"
import { giveUpExitMs, shardsLost } from "../src/platform/ops/ShardWatchdog.ts"
import * as Telemetry from "../src/platform/telemetry/Telemetry.ts"
import { nodeLayer, nodeName } from "./Node.ts"

const main = Effect.gen(function*() {
  const config = yield* nodeConfig
  // SIGTERM drains, then stops within a bound (src/platform/NodeMain.ts).
  yield* setStopSettings(config)
  yield* Effect.logInfo(`starting ${nodeName(config)}: http://${config.httpHost}:${config.httpPort}/api/public/v1 (docs at /api-docs)`).pipe(
    Effect.provide(Telemetry.logLayer(config.telemetry))
  )
  // An embedded database that died and could not be restarted, or a runner that lost its shards
  // for good, stops the node (exit code 1, so a process manager restarts it); finalizers still run.
  return yield* Layer.launch(nodeLayer(config)).pipe(Effect.raceFirst(databaseLost), Effect.raceFirst(shardsLost.pipe(
    Effect.tapError(() => Effect.sync(() => setTimeout(() => process.exit(1), giveUpExitMs).unref()))
  )))
})

// A listener that cannot take its port is one line naming the service, address and setting, exit 1
// (the layers already built, the embedded database among them, are stopped first).
const exitOnListenFailed = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.catchIf(self, (e): e is E & ListenFailed => e instanceof ListenFailed, (e) =>
    Effect.sync(() => {
      process.stderr.write(`shardline: ${e.message}\n`)
      return process.exit(1)
    }))

runNodeMain(exitOnListenFailed(exitOnConfigError(main)), { disableErrorReporting: false })
