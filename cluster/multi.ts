// `npm run cluster -- --nodes 3 [--processes P]`: N identical nodes on loopback against one
// Postgres, each a runner (NodeClusterSocket; P runner processes when P > 1, cluster/Primary.ts)
// serving HTTP on its own port. Uses SHARDLINE_DATABASE_URL, or starts the embedded local
// postgres under the data dir (PGlite is single-node only).
// Chains: one litecoind -regtest and one anvil for every node (harness/sharedChains.ts), unless
// SHARDLINE_LEDGER_RPC_URL and SHARDLINE_EVM_RPC_URLS name chains already, or --devnets asks for
// a devnet per node; when they cannot start, each node runs its own devnets and a line says why.
// Public URLs: SHARDLINE_DESK_PUBLIC_URL / SHARDLINE_SOCIAL_PUBLIC_URL, when set, go to every node
// (one URL for the cluster, as behind a load balancer); otherwise each node's are its own ports. A
// wallet link then names the node that made it (the token records that URL), and any node serves
// and redeems it.
import { spawn, type ChildProcess } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { Option, Redacted } from "effect"
import { loadMasterKey } from "../src/platform/SecretBox.ts"
import { startSharedChains, type SharedChains } from "../harness/sharedChains.ts"
import { nodeFlags } from "./nodeFlags.ts"

const here = dirname(fileURLToPath(import.meta.url))
const { values } = parseArgs({
  options: {
    nodes: { type: "string", default: "3" },
    "http-port": { type: "string", default: process.env.SHARDLINE_HTTP_PORT ?? "8080" },
    "desk-http-port": { type: "string", default: process.env.SHARDLINE_DESK_HTTP_PORT ?? "8180" },
    "social-http-port": { type: "string", default: process.env.SHARDLINE_SOCIAL_HTTP_PORT ?? "8280" },
    "runner-port": { type: "string", default: process.env.SHARDLINE_RUNNER_PORT ?? "34431" },
    devnets: { type: "boolean", default: false },
    // Runner processes per node (cluster/Primary.ts): node i's take runner ports runner-port + i * processes + w.
    processes: { type: "string", default: process.env.SHARDLINE_PROCESSES ?? "1" }
  }
})
const count = Number(values.nodes)
if (!Number.isInteger(count) || count < 1 || count > 16) {
  console.error("--nodes must be an integer from 1 to 16")
  process.exit(2)
}
const processes = Number(values.processes)
if (!Number.isInteger(processes) || processes < 1 || processes > 32) {
  console.error("--processes must be an integer from 1 to 32")
  process.exit(2)
}
const dataDir = process.env.SHARDLINE_DATA_DIR ?? "./.data"
let url = process.env.SHARDLINE_DATABASE_URL
let stopDb: (() => Promise<void>) | undefined
if (!url) {
  const { connectOrStartEmbedded } = await import("../src/platform/database/embedded/EmbeddedPostgres.ts")
  const db = await connectOrStartEmbedded({ dataDir, engine: "postgres" })
  url = db.url
  stopDb = db.stop
}
// Every node must seal and open secrets with the same key.
const masterKey = process.env.SHARDLINE_MASTER_KEY ??
  loadMasterKey({ masterKey: Option.none<Redacted.Redacted>(), dataDir }).toString("hex")

// Every node on the same chains: the ones SHARDLINE_LEDGER_RPC_URL and SHARDLINE_EVM_RPC_URLS
// name, else one litecoind and one anvil started here. A devnet per node (each node its own
// chains, wrong for anything that moves money) only with --devnets or when those cannot start.
const chainsGiven = Boolean(process.env.SHARDLINE_LEDGER_RPC_URL && process.env.SHARDLINE_EVM_RPC_URLS)
let shared: SharedChains | undefined
if (!chainsGiven && !values.devnets) {
  try {
    shared = await startSharedChains(dataDir)
    console.error(`chains: one for every node: ${shared.summary} (BTC stays an in-process devnet per node)`)
  } catch (e) {
    console.error(`note: shared chains could not start (${e instanceof Error ? e.message.split("\n")[0] : String(e)}); each node runs its own in-process devnet chains instead`)
  }
}
const devnetPerNode = process.env.SHARDLINE_DEVNET_PER_NODE ?? (chainsGiven || shared !== undefined ? "false" : "true")
if (devnetPerNode === "true" && values.devnets) console.error("note: --devnets: each node runs its own in-process devnet chains")
else if (devnetPerNode === "true" && shared === undefined && !chainsGiven) console.error("note: no shared chain nodes; each node's chains are its own (wrong for anything that moves money)")

/** A node that exits before it first answers /ping died at start: it is started again this many
 * times, with a growing pause, before the whole cluster is stopped with the reason. */
const START_RETRIES_MAX = 3
const START_RETRY_BASE_MS = 1_000
const READY_POLL_MS = 500

const children: Array<ChildProcess | undefined> = []
let stopping = false

const nodeEnv = (i: number) => ({
  ...process.env,
  SHARDLINE_TOPOLOGY: "socket",
  SHARDLINE_DATABASE_URL: url,
  SHARDLINE_MASTER_KEY: masterKey,
  SHARDLINE_DEVNET_PER_NODE: devnetPerNode,
  ...shared?.vars,
  SHARDLINE_DATA_DIR: join(dataDir, `node${i + 1}`),
  SHARDLINE_HTTP_PORT: String(Number(values["http-port"]) + i),
  SHARDLINE_DESK_HTTP_PORT: String(Number(values["desk-http-port"]) + i),
  SHARDLINE_SOCIAL_HTTP_PORT: String(Number(values["social-http-port"]) + i),
  SHARDLINE_RUNNER_HOST: "127.0.0.1",
  SHARDLINE_RUNNER_PORT: String(Number(values["runner-port"]) + i * processes),
  SHARDLINE_PROCESSES: String(processes)
})

const answersPing = (port: string) =>
  fetch(`http://127.0.0.1:${port}/api/public/v1/ping`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.ok, () => false)

const startNode = (i: number, attempt: number): void => {
  const env = nodeEnv(i)
  const child = spawn(process.execPath, [...nodeFlags, "--import", "tsx", join(here, "main.ts")], { env, stdio: ["ignore", "pipe", "pipe"] })
  const tag = `[node${i + 1} http:${env.SHARDLINE_HTTP_PORT}/${env.SHARDLINE_DESK_HTTP_PORT}/${env.SHARDLINE_SOCIAL_HTTP_PORT}]`
  const prefix = (chunk: Buffer) => chunk.toString().split("\n").filter((l) => l !== "").map((l) => `${tag} ${l}`).join("\n") + "\n"
  child.stdout!.on("data", (c: Buffer) => process.stdout.write(prefix(c)))
  child.stderr!.on("data", (c: Buffer) => process.stderr.write(prefix(c)))
  let ready = false
  const poll = setInterval(() => {
    void answersPing(env.SHARDLINE_HTTP_PORT).then((ok) => {
      if (ok && !ready) {
        ready = true
        clearInterval(poll)
      }
    })
  }, READY_POLL_MS)
  child.on("exit", (code, signal) => {
    clearInterval(poll)
    if (stopping) return
    const how = signal ?? `code ${code}`
    if (ready) {
      console.error(`${tag} exited (${how}); the other nodes take over its shards`)
      return
    }
    if (attempt < START_RETRIES_MAX) {
      const pauseMs = START_RETRY_BASE_MS * 2 ** attempt
      console.error(`${tag} died at start (${how}); starting it again in ${pauseMs} ms (retry ${attempt + 1} of ${START_RETRIES_MAX})`)
      setTimeout(() => { if (!stopping) startNode(i, attempt + 1) }, pauseMs)
      return
    }
    void shutdown(`node${i + 1} died at start ${attempt + 1} times (last: ${how}); stopping the cluster`, 1)
  })
  children[i] = child
}

const shutdown = async (reason: string, exitCode: number) => {
  if (stopping) return
  stopping = true
  console.error(reason)
  await Promise.all(children.map((c) => new Promise<void>((resolve) => {
    if (c === undefined || c.exitCode !== null || c.signalCode !== null) return resolve()
    c.once("exit", () => resolve())
    c.kill("SIGTERM")
  })))
  await shared?.stop()
  await stopDb?.()
  process.exit(exitCode)
}

const publicUrls = [process.env.SHARDLINE_DESK_PUBLIC_URL, process.env.SHARDLINE_SOCIAL_PUBLIC_URL]
console.error(publicUrls.every((u) => u === undefined || u === "")
  ? "public URLs: each node's own ports (wallet links name the node that made them and work on any node; set SHARDLINE_DESK_PUBLIC_URL and SHARDLINE_SOCIAL_PUBLIC_URL for one URL behind a load balancer)"
  : `public URLs: desk ${publicUrls[0] || "each node's own port"}, social ${publicUrls[1] || "each node's own port"}, the same on every node`)
for (let i = 0; i < count; i++) startNode(i, 0)
// A fresh shared ledger: the fee sponsor (its wallet made by the first node) gets its first coin.
if (shared !== undefined && url !== undefined) {
  void shared.fundSponsor(url).then((line) => console.error(`chains: ${line}`), (e) => console.error(`chains: the fee sponsor was not funded: ${String(e)}`))
}
process.on("SIGINT", () => void shutdown("SIGINT: stopping every node", 0))
process.on("SIGTERM", () => void shutdown("SIGTERM: stopping every node", 0))
