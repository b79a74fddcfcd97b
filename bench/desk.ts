// `npm run bench -- desk`: (1) the desk's transparency reads (GET /api/public/reserves and
// /api/public/v1/stables/assets, answered from the node-local cache) through the full stack of a
// real node process, against a bare node:http server answering the same bytes, same run, same
// load (bench/http.ts's load generator and bare server); (2) the reserves scan of 1,000 vault
// addresses on the devnets (200 each on btc, ltc, ethereum, base, bsc; every stablecoin and ETH
// read per EVM address), in process. Prints tables, writes bench/results/desk.json; timing is
// reported, never asserted. Knobs as bench/http.ts (BENCH_HTTP_*), BENCH_DESK_SCAN_ADDRESSES.
import { randomBytes } from "node:crypto"
import { cpus } from "node:os"
import { Effect, Layer } from "effect"
import * as ReserveScanner from "../src/desk/reserves/ReserveScanner.ts"
import * as DeskWallets from "../src/desk/wallets/DeskWallets.ts"
import { deskChains } from "../src/desk/wallets/paths.ts"
import * as ChainsLive from "../src/platform/ChainsLive.ts"
import { configLayer } from "../src/config.ts"
import { databaseLayer } from "../src/platform/database/Database.ts"
import { migrations } from "../src/migrations.ts"
import * as OmniViewIndexer from "../src/platform/ledger/OmniViewIndexer.ts"
import * as SecretBox from "../src/platform/SecretBox.ts"
import { configFrom, testMasterKey } from "../harness/config.ts"
import { createTestDatabase } from "../harness/db.ts"
import { spawnNode } from "../harness/nodeProcess.ts"
import { freePort } from "../harness/ports.ts"
import { type BareSpec, capture, load, sameBytes, startBare } from "./http.ts"
import { envInt, printTable, writeResults, type Row } from "./report.ts"

const scanAddresses = envInt("BENCH_DESK_SCAN_ADDRESSES", 1_000)
const reservesPath = "/api/public/reserves"
const stablesPath = "/api/public/v1/stables/assets"

const readsBench = async (dbUrl: string): Promise<ReadonlyArray<Row>> => {
  const deskPort = await freePort()
  const node = await spawnNode({
    SHARDLINE_TOPOLOGY: "single", SHARDLINE_DATABASE_URL: dbUrl, SHARDLINE_MASTER_KEY: testMasterKey,
    SHARDLINE_DESK_HTTP_PORT: String(deskPort), SHARDLINE_DESK_RATE_LIMIT_IP_WEIGHT: "100000000"
  })
  const deskUrl = `http://127.0.0.1:${deskPort}`
  try {
    const spec: BareSpec = { [reservesPath]: await capture(deskUrl, reservesPath, {}, false), [stablesPath]: await capture(deskUrl, stablesPath, {}, false) }
    const bare = await startBare(spec, stablesPath)
    try {
      const rows: Array<Row> = []
      for (const path of [reservesPath, stablesPath]) {
        await sameBytes(deskUrl, bare.baseUrl, path, {})
        const target = { baseUrl: deskUrl, pid: node.pid, next: () => ({ path, headers: {} }) }
        const ours = await load(target)
        const theirs = await load({ ...target, baseUrl: bare.baseUrl, pid: bare.pid })
        for (const [server, m] of [["shardline", ours], ["bare node:http", theirs]] as const) {
          rows.push({
            endpoint: `GET ${path}`, server, requests: m.requests, errors: m.errors, "req/s": Math.round(m.rps),
            "p50 ms": Number(m.p50Ms.toFixed(2)), "p99 ms": Number(m.p99Ms.toFixed(2)), "CPU µs/req": Math.round(m.cpuUsPerRequest),
            "req/s ours/bare": server === "shardline" ? Number((ours.rps / theirs.rps).toFixed(3)) : ""
          })
        }
      }
      return rows
    } finally {
      bare.child.kill("SIGTERM")
    }
  } finally {
    node.child.kill("SIGTERM")
    await Promise.race([node.exited, new Promise((r) => setTimeout(r, 20_000))])
    await node.dispose()
  }
}

const scanBench = async (dbUrl: string): Promise<ReadonlyArray<Row>> => {
  const config = configFrom({ SHARDLINE_DATABASE_URL: dbUrl, SHARDLINE_MASTER_KEY: testMasterKey, SHARDLINE_DEVNET_BLOCK_MS: "0" })
  const layer = ReserveScanner.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(DeskWallets.layer, OmniViewIndexer.layer)),
    Layer.provideMerge(ChainsLive.layer),
    Layer.provideMerge(SecretBox.layer),
    Layer.provideMerge(databaseLayer({ applicationName: "bench:desk", migrations })),
    Layer.provideMerge(configLayer(config))
  )
  return Effect.runPromise(Effect.scoped(Effect.provide(Effect.gen(function*() {
    const wallets = yield* DeskWallets.DeskWallets
    const scanner = yield* ReserveScanner.ReserveScanner
    // Deposit-tree keys of the desk's own seed, spread over the scanned chains.
    const chains = deskChains.filter((c) => c !== "ledger")
    const list = Array.from({ length: scanAddresses }, (_, i) => {
      const chain = chains[i % chains.length]!
      return { chain, group: "cold" as const, address: wallets.depositKey(chain, 1_000_000 + i).address }
    })
    const rows: Array<Row> = []
    for (const round of [1, 2, 3]) {
      const t0 = performance.now()
      const holdings = yield* scanner.scanAddresses(list)
      rows.push({ round, addresses: list.length, "balance reads": holdings.length, "scan ms": Math.round(performance.now() - t0) })
    }
    return rows
  }), layer)))
}

export const run = async (): Promise<void> => {
  const db = await createTestDatabase(`benchdesk${randomBytes(2).toString("hex")}`)
  try {
    console.log("desk bench: transparency reads vs bare node:http (same bytes), then the reserves scan on the devnets")
    const reads = await readsBench(db.url)
    printTable("Desk transparency reads: ours vs bare node:http answering the same bytes (goal >= 0.6x)", reads)
    const scan = await scanBench(db.url)
    printTable(`Reserves scan of ${scanAddresses} vault addresses on the in-process devnets (btc, ltc: UTXO sets; ethereum, base, bsc: 4 stablecoins each, ETH on ethereum)`, scan)
    writeResults("desk", { cpus: cpus().length, reads, scan })
  } finally {
    await db.drop()
  }
}
