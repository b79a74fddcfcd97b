// `npm run bench -- tradeCpu`: the node's CPU for a trade, apart from the order that makes it
// (issue 22, point 3: ≤ 1 ms of node CPU per trade). The orders bench divides all of the node's
// CPU by its trades, and on a shared, loaded box a saturated loop makes that figure move with the
// load; here the same clients send, in alternating phases, the same number of orders that rest
// (priced off the touch, cancelled after the phase, outside it) and orders that cross the makers
// and fill (one trade each: matching, two legs recorded, signed, stored and broadcast before the
// answer, then followed by the market's sweep). Each phase is measured in CPU time of the node
// process (/proc), including a quiet tail so the per-block sweep of its legs counts where it
// belongs, less the node's idle CPU over that tail. CPU per trade = (cross phase − rest phase) / orders.
// The ledger (BENCH_LEDGER, bench/parts/benchLedger.ts): `devnet` (default), the node's in-process
// devnet, whose validation of every leg counts here; `litecoind`, a litecoind -regtest outside the
// node (the condition for the ≤ 1 ms goal), whose own CPU is reported apart; or
// `devnet,litecoind`: both, one after the other in one invocation, each with its own database,
// node and world, and the devnet's own cost as the difference of the two medians. Blocks come
// every BENCH_BLOCK_MS (1000) on either. The load average is printed with every figure.
//
// Knobs: BENCH_TRADECPU_CLIENTS (16, split over two markets), BENCH_TRADECPU_ORDERS (10 per
// client per phase), BENCH_TRADECPU_ROUNDS (3 pairs of phases), BENCH_TRADECPU_TAIL_MS (1500),
// BENCH_TRADECPU_PROFILE=1 (CPU profiles of the first round's two phases: self time by area, cross − rest;
// kept as bench/results/tradeCpu.<ledger>.<phase>.cpuprofile).
import { readFileSync } from "node:fs"
import { Agent } from "node:http"
import { loadavg } from "node:os"
import { createTestDatabase } from "../harness/db.ts"
import { type LedgerName, ledgersFromEnv } from "./parts/benchLedger.ts"
import { type CpuProfile, summarise } from "./parts/cpuProfile.ts"
import { call, signedPath } from "./parts/orderLoad.ts"
import { printTable, writeResults, type Row } from "./report.ts"

const envInt = (name: string, fallback: number) => {
  const v = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer`)
  return v
}
const clients = envInt("BENCH_TRADECPU_CLIENTS", 16)
const perClient = envInt("BENCH_TRADECPU_ORDERS", 10)
const rounds = envInt("BENCH_TRADECPU_ROUNDS", 3)
const tailMs = envInt("BENCH_TRADECPU_TAIL_MS", 1_500)
const profile = process.env.BENCH_TRADECPU_PROFILE === "1"
const load = () => loadavg().map((x) => x.toFixed(2)).join(" ")

export const run = async (): Promise<void> => {
  const ledgers = ledgersFromEnv()
  const results: Array<Awaited<ReturnType<typeof runOn>>> = []
  for (const ledger of ledgers) results.push(await runOn(ledger))
  const { round } = await import("./orders.ts")
  const summary: Array<Row> = results.map((r) => ({
    ledger: r.ledger, "block ms": r.blockMs, "node CPU ms/trade (median)": round(r.medianPerTradeMs), rounds: r.perTradeMs.map((x) => round(x)).join(", "),
    "ledger process CPU ms/trade (median)": r.ledger === "devnet" ? "in the node" : round(r.medianLedgerPerTradeMs), "load avg": r.load
  }))
  printTable("Node CPU per trade by ledger", summary)
  const devnet = results.find((r) => r.ledger === "devnet")
  const ltc = results.find((r) => r.ledger === "litecoind")
  const devnetOwnMs = devnet !== undefined && ltc !== undefined ? devnet.medianPerTradeMs - ltc.medianPerTradeMs : undefined
  if (devnetOwnMs !== undefined) console.log(`the in-process devnet's own cost (devnet median − litecoind median): ${round(devnetOwnMs)} ms per trade`)
  writeResults("tradeCpu", { clients, perClient, rounds, tailMs, ledgers: results, devnetOwnMsPerTrade: devnetOwnMs })
}

const runOn = async (ledgerName: LedgerName) => {
  // The orders bench's world (node process, markets, makers at the touch, funded grants), sized here.
  process.env.BENCH_ORDERS_CLIENTS = String(clients)
  process.env.BENCH_ORDERS_HISTORY_TRADES = "0"
  const { round, setupWorld, stopNode, treeCpuMs } = await import("./orders.ts")
  const db = await createTestDatabase("benchtradecpu")
  const world = await setupWorld(db, undefined, ledgerName).catch(async (e: unknown) => {
    await db.drop()
    throw e
  })
  const { node, users, marketOfClient, ipc, ledger } = world
  const url = new URL(node.baseUrl)
  const agent = new Agent({ keepAlive: true, maxSockets: clients })
  const tick = (t: number) => `${Math.floor(t / 100)}.${String(t % 100).padStart(2, "0")}`
  try {
    // The node's idle CPU rate (timers, devnet clock, Omni follower, storage polls), taken off each tail.
    await new Promise((r) => setTimeout(r, 2_000))
    const idle0 = treeCpuMs(node.pid)
    const idleLedger0 = ledger.cpuMs()
    await new Promise((r) => setTimeout(r, 3_000))
    const idleMsPerMs = (treeCpuMs(node.pid) - idle0) / 3_000
    const idleLedgerMsPerMs = (ledger.cpuMs() - idleLedger0) / 3_000

    /** One phase: every client sends perClient orders of the kind, one after another; the node's CPU for them. */
    const phase = async (kind: "rest" | "cross", profileFile?: string) => {
      const placed: Array<{ i: number; orderId: string }> = []
      let failed = 0
      let trades = 0
      if (profileFile !== undefined) await ipc("profileStart")
      const cpu0 = treeCpuMs(node.pid)
      const ledger0 = ledger.cpuMs()
      const t0 = performance.now()
      await Promise.all(users.map(async (key, i) => {
        const symbol = marketOfClient(i).symbol
        for (let n = 0; n < perClient; n++) {
          const side = (i + n) % 2 === 0 ? "BUY" : "SELL"
          const price = kind === "cross" ? (side === "BUY" ? "100.00" : "99.00") : side === "BUY" ? tick(9000 + ((i * 37 + n * 11) % 900)) : tick(10001 + ((i * 37 + n * 11) % 900))
          const a = await call(agent, url, "POST", signedPath("/order", key, { symbol, side, type: "LIMIT", timeInForce: "GTC", price, quantity: "0.05" }), key)
          if (a.status !== 200) {
            failed++
            continue
          }
          const body = JSON.parse(a.body) as { orderId: string; fills: ReadonlyArray<{ legs: ReadonlyArray<{ txid: string }> }> }
          if (kind === "rest") placed.push({ i, orderId: body.orderId })
          trades += body.fills.length
        }
      }))
      const wallMs = performance.now() - t0
      await new Promise((r) => setTimeout(r, tailMs))
      // Idle CPU is taken off for the tail only: during the phase the node is busy, not idle.
      const cpuMs = treeCpuMs(node.pid) - cpu0 - idleMsPerMs * tailMs
      const ledgerCpuMs = ledger.cpuMs() - ledger0 - idleLedgerMsPerMs * (wallMs + tailMs)
      if (profileFile !== undefined) await ipc("profileStop", { file: profileFile })
      // The resting orders leave the book outside the measurement.
      await Promise.all(placed.map(({ i, orderId }) =>
        call(agent, url, "DELETE", signedPath("/order", users[i]!, { symbol: marketOfClient(i).symbol, orderId }), users[i]!)))
      await new Promise((r) => setTimeout(r, 500))
      return { kind, orders: users.length * perClient - failed, failed, trades, cpuMs, ledgerCpuMs, wallMs, load: load() }
    }

    console.log(`tradeCpu on ${ledger.name} (a block every ${ledger.blockMs} ms): ${clients} clients, ${perClient} orders each per phase, ${rounds} rounds, tail ${tailMs} ms; node idle ${round(idleMsPerMs * 1000)} ms CPU/s  [load average ${load()}]`)
    await phase("cross") // warm-up: first leg of every grant (wallet opened, coins loaded), JIT
    await phase("rest")
    const rows: Array<Row> = []
    const perTrade: Array<number> = []
    const ledgerPerTrade: Array<number> = []
    const profileOf = (kind: string) => new URL(`./results/tradeCpu.${ledger.name}.${kind}.cpuprofile`, import.meta.url).pathname
    for (let r = 0; r < rounds; r++) {
      const rest = await phase("rest", profile && r === 0 ? profileOf("rest") : undefined)
      const cross = await phase("cross", profile && r === 0 ? profileOf("cross") : undefined)
      const restPerOrder = rest.cpuMs / rest.orders
      const crossPerOrder = cross.cpuMs / cross.orders
      const marginal = (crossPerOrder - restPerOrder) * cross.orders / Math.max(1, cross.trades)
      perTrade.push(marginal)
      const ledgerMarginal = (cross.ledgerCpuMs / cross.orders - rest.ledgerCpuMs / rest.orders) * cross.orders / Math.max(1, cross.trades)
      ledgerPerTrade.push(ledgerMarginal)
      for (const p of [rest, cross]) {
        rows.push({
          round: r + 1, phase: p.kind, orders: p.orders, failed: p.failed, trades: p.trades, "node CPU ms": round(p.cpuMs, 0),
          "CPU ms/order": round(p.cpuMs / p.orders), "orders/s": round(p.orders / (p.wallMs / 1000), 0),
          "CPU ms/trade (cross − rest)": p.kind === "cross" ? round(marginal) : "",
          ...(ledger.name === "devnet" ? {} : { "litecoind CPU ms": round(p.ledgerCpuMs, 0), "litecoind ms/trade": p.kind === "cross" ? round(ledgerMarginal) : "" }),
          "load avg": p.load
        })
      }
    }
    let profileDiff: Array<Row> | undefined
    const sorted = [...perTrade].sort((a, b) => a - b)
    const median = sorted[Math.floor(sorted.length / 2)]!
    const ledgerMedian = [...ledgerPerTrade].sort((a, b) => a - b)[Math.floor(ledgerPerTrade.length / 2)]!
    printTable(`Node CPU per trade, apart from its order (ledger: ${ledger.name}${ledger.name === "devnet" ? ", its validation in the node" : ", outside the node"})`, rows)
    if (profile) {
      // Self time by area in the first round's cross phase less its rest phase, per trade.
      const [rest, cross] = ["rest", "cross"].map((k) => summarise(JSON.parse(readFileSync(profileOf(k), "utf8")) as CpuProfile, 1000))
      const restBy = new Map(rest!.byArea.map((a) => [a.where, a.selfMs]))
      const trades = users.length * perClient
      const diff = cross!.byArea.map((a) => ({ where: a.where, "µs per trade": Math.round(((a.selfMs - (restBy.get(a.where) ?? 0)) * 1000) / trades) }))
        .sort((a, b) => b["µs per trade"] - a["µs per trade"]).slice(0, 25)
      printTable(`Where a trade's CPU goes on ${ledger.name}: profile self time, cross phase − rest phase, per trade (round 1)`, diff)
      profileDiff = diff
    }
    console.log(`node CPU per trade on ${ledger.name}: median ${round(median)} ms over ${rounds} rounds (${sorted.map((x) => round(x)).join(", ")})  [load average ${load()}]`)
    return { ledger: ledger.name, blockMs: ledger.blockMs, idleMsPerMs, idleLedgerMsPerMs, rows, perTradeMs: perTrade, medianPerTradeMs: median, ledgerPerTradeMs: ledgerPerTrade, medianLedgerPerTradeMs: ledgerMedian, profileDiff, load: load() }
  } finally {
    agent.destroy()
    await stopNode(node)
    await ledger.stop()
    await db.drop()
  }
}
