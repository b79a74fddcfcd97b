// Runs a whole node (HTTP + entities + storage) inside the test process against a test
// database, on a free port; stop() interrupts it, which runs every finalizer.
import { mkdtempSync } from "node:fs"
export { freePort } from "../../harness/ports.ts"
import { freePort } from "../../harness/ports.ts"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Context, Deferred, Effect, Fiber, Layer } from "effect"
import { nodeLayer } from "../../cluster/Node.ts"
import type { UtxoDevnet } from "../../src/chain/ledger/devnet.ts"
import type { NodeConfigShape } from "../../src/config.ts"
import { configFrom, testMasterKey } from "../../harness/config.ts"


export { configFrom, testMasterKey } from "../../harness/config.ts"

/** What a running node's layer holds: its chains, services, the Omni view, the fee sponsor, Sharding. */
export type NodeContext = Layer.Layer.Success<ReturnType<typeof nodeLayer>>

export interface RunningNode {
  /** The exchange listener. */
  readonly baseUrl: string
  readonly deskUrl: string
  readonly socialUrl: string
  readonly config: NodeConfigShape
  /**
   * Runs an effect inside this node: its own chains (devnets or JSON-RPC adapters), services and
   * Sharding (entity clients). UtxoDevnet (fault injection) is there when the ledger is a devnet.
   */
  readonly run: <A, E>(effect: Effect.Effect<A, E, NodeContext | UtxoDevnet>) => Promise<A>
  readonly stop: () => Promise<void>
}

/** How long startNode waits for the three listeners to answer. */
const startWaitMs = 90_000

/** `beneath` is built before the node and given to it (a test's own tracer, say). */
export const startNode = async (databaseUrl: string, vars: Record<string, string> = {}, beneath: Layer.Layer<never> = Layer.empty): Promise<RunningNode> => {
  const port = await freePort()
  const config = configFrom({
    SHARDLINE_HTTP_PORT: String(port),
    SHARDLINE_DESK_HTTP_PORT: String(await freePort()),
    SHARDLINE_SOCIAL_HTTP_PORT: String(await freePort()),
    SHARDLINE_DATABASE_URL: databaseUrl,
    SHARDLINE_DATA_DIR: mkdtempSync(join(tmpdir(), "sl-node-")),
    SHARDLINE_MASTER_KEY: testMasterKey,
    SHARDLINE_RUNNER_PORT: String(await freePort()),
    ...vars
  })
  // Layer.launch, keeping the built context for `run`.
  const built = Effect.runSync(Deferred.make<Context.Context<NodeContext>>())
  const fiber = Effect.runFork(Effect.scoped(Effect.gen(function*() {
    yield* Deferred.succeed(built, yield* Layer.build(nodeLayer(config).pipe(Layer.provide(beneath))))
    return yield* Effect.never
  })))
  const baseUrl = `http://127.0.0.1:${port}`
  // Generous: on a shared machine under load a node's start (migrations, shards, three
  // listeners) has taken more than 30 s; a node that never starts still fails here.
  const deadline = Date.now() + startWaitMs
  // Each service has its own listener, and they come up independently: the node is started when
  // all three answer (any status: the desk and social roots are 404s in their own shape).
  const answers = async (url: string) => {
    try {
      return (await fetch(url)).status
    } catch {
      return 0 // not listening yet
    }
  }
  // Listening is not started, though: the node's layers build concurrently, and some finish after
  // the listeners answer (the key epochs wait up to 10 s for a running node to hand its chain
  // over). A test that stopped another node then left this one to fail that wait and exit, so the
  // node is started once its whole layer is built too.
  let listening = false
  for (;;) {
    if (!listening) {
      const [exchange, desk, social] = await Promise.all([
        answers(`${baseUrl}/api/public/v1/ping`),
        answers(`http://127.0.0.1:${config.deskHttpPort}/`),
        answers(`http://127.0.0.1:${config.socialHttpPort}/`)
      ])
      listening = exchange === 200 && desk > 0 && social > 0
    }
    if (listening && Effect.runSync(Deferred.isDone(built))) break
    if (fiber.unsafePoll() !== null) throw new Error(`node exited during start: ${JSON.stringify(fiber.unsafePoll())}`)
    if (Date.now() > deadline) throw new Error(`node did not ${listening ? "finish starting" : "start"} within ${startWaitMs / 1000} s`)
    await new Promise((r) => setTimeout(r, listening ? 50 : 100))
  }
  return {
    baseUrl,
    deskUrl: `http://127.0.0.1:${config.deskHttpPort}`,
    socialUrl: `http://127.0.0.1:${config.socialHttpPort}`,
    config,
    run: (effect) =>
      Effect.runPromise(Effect.flatMap(Deferred.await(built), (context) =>
        // The devnet layer adds UtxoDevnet beside UtxoLedger; ChainsLive's type only names the port.
        Effect.provide(effect, context as Context.Context<NodeContext | UtxoDevnet>))),
    stop: () => Effect.runPromise(Fiber.interrupt(fiber)).then(() => undefined)
  }
}

/** The environment a CLI child process needs to reach this running node (same database, key, data dir). */
export const cliEnvOf = (databaseUrl: string, node: RunningNode): Record<string, string> =>
  ({ SHARDLINE_DATABASE_URL: databaseUrl, SHARDLINE_MASTER_KEY: testMasterKey, SHARDLINE_DATA_DIR: node.config.dataDir })
