// `npm start`: the whole system in one process (or one node of a cluster when
// SHARDLINE_TOPOLOGY=socket). Configuration comes only from SHARDLINE_* variables. With
// SHARDLINE_PROCESSES > 1 this process is the node's primary and each of its workers runs this
// same file as one runner of the node (cluster/Primary.ts).
import cluster from "node:cluster"
import { Effect, Layer } from "effect"
import { nodeConfig } from "../src/config.ts"
import { exitOnConfigError } from "../src/platform/Config.ts"
import { databaseLost } from "../src/platform/database/EmbeddedDatabase.ts"
import { ListenFailed } from "../src/platform/http/Listener.ts"
import { readyMessage, runNodeMain, setStopSettings } from "../src/platform/NodeMain.ts"
import { answerMetricsRequests } from "../src/platform/ops/processMetrics.ts"
import { giveUpExitMs, shardsLost } from "../src/platform/ops/ShardWatchdog.ts"
import * as Telemetry from "../src/platform/telemetry/Telemetry.ts"
import { nodeLayer, nodeName } from "./Node.ts"
import { runPrimary, WorkersFailed } from "./Primary.ts"

/** A worker tells its primary when its node is up (the primary starts the others after the first). */
const announceReady = Effect.sync(() => {
  if (cluster.isWorker) process.send?.(readyMessage)
})

const main = Effect.gen(function*() {
  const config = yield* nodeConfig
  if (config.processes > 1 && cluster.isPrimary) {
    return yield* runPrimary(config).pipe(Effect.raceFirst(databaseLost), Effect.provide(Telemetry.logLayer(config.telemetry)))
  }
  // SIGTERM drains, then stops within a bound (src/platform/NodeMain.ts).
  yield* setStopSettings(config)
  // A worker of a primary: /metrics answers for every process of the node.
  yield* Effect.sync(answerMetricsRequests)
  yield* Effect.logInfo(`starting ${nodeName(config)}: http://${config.httpHost}:${config.httpPort}/api/public/v1 (docs at /api-docs)`).pipe(
    Effect.provide(Telemetry.logLayer(config.telemetry))
  )
  // A start that never ends exits 1 for the process manager (chaos seed 10: a node whose database
  // was cut 6 s into its start never served, though its runner and shard loop ran on). The
  // process exits outright: what hangs a start may hang its finalizers too.
  const deadline = setTimeout(() => {
    process.stderr.write(`shardline: not started ${config.startDeadlineMs} ms after the process began (SHARDLINE_START_DEADLINE_MS); exiting\n`)
    process.exit(1)
  }, Math.max(0, config.startDeadlineMs - process.uptime() * 1000)).unref()
  const started = Effect.zipRight(announceReady, Effect.sync(() => clearTimeout(deadline)))
  // An embedded database that died and could not be restarted, or a runner that lost its shards
  // for good, stops the node (exit code 1, so a process manager restarts it); finalizers still run.
  return yield* Layer.launch(nodeLayer(config).pipe(Layer.tap(() => started))).pipe(Effect.raceFirst(databaseLost), Effect.raceFirst(shardsLost.pipe(
    Effect.tapError(() => Effect.sync(() => setTimeout(() => process.exit(1), giveUpExitMs).unref()))
  )))
})

// A listener that cannot take its port, or a primary whose workers cannot start, is one line
// naming the cause, exit 1 (the layers already built, the embedded database among them, are
// stopped first).
const exitOnStartFailure = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.catchIf(self, (e): e is E & (ListenFailed | WorkersFailed) => e instanceof ListenFailed || e instanceof WorkersFailed, (e) =>
    Effect.sync(() => {
      process.stderr.write(`shardline: ${e.message}\n`)
      return process.exit(1)
    }))

runNodeMain(exitOnStartFailure(exitOnConfigError(main)), { disableErrorReporting: false })
