// `npm run bench -- fanout`: SSE fan-out on a working node (issue 22, point 5). The marketdata
// bench's SSE figure comes from a process that runs only the stream route; here the streams are
// served by a running node (bench/parts/orderNode.ts: `npm start`'s layer, all three listeners)
// while it takes signed orders that trade on the streamed market.
//
// Setup: the orders bench's world (setupWorld in bench/orders.ts: the node, one market with makers
// resting at the touch, BENCH_FANOUT_CLIENTS funded users). Two measured windows of the same order
// load (BENCH_FANOUT_CROSS_PCT % of orders cross a maker and trade; every trade's legs recorded and
// broadcast inline): first with no stream open, then with BENCH_FANOUT_STREAMS streams of that
// market open (all three event kinds, as a client that names none gets), opened by a child process
// (bench/parts/sseClients.ts) so the clients do not share the node's or the load generator's loop.
// Per window: orders and trades per second, the delay from a delta's publish on the owner to each
// client's receipt of its trade events (p50/p99/max), the node's CPU and event loop, the CPU of the
// load generator (this process) and of the stream clients, the machine's CPU, and the load
// average. Writes bench/results/fanout.json. Timing is reported, never asserted.
//
// Knobs: BENCH_FANOUT_STREAMS (5000), BENCH_FANOUT_CLIENTS (32 order clients), BENCH_FANOUT_CROSS_PCT
// (100), BENCH_FANOUT_DURATION_MS (10000 per window), BENCH_FANOUT_WARMUP_MS (3000),
// BENCH_FANOUT_NODE_VARS (extra SHARDLINE_* for the node, as JSON).
import { type ChildProcess, fork } from "node:child_process"
import { cpus, loadavg } from "node:os"
import { createTestDatabase } from "../harness/db.ts"
import { sseClients } from "./marketdata.ts"
import { driveLoad } from "./parts/orderLoad.ts"
import type { fanoutFigures } from "../src/exchange/marketdata/sse.ts"
import { envInt, printTable, writeResults, type Row } from "./report.ts"

const streamsWanted = envInt("BENCH_FANOUT_STREAMS", 5_000)
const clients = envInt("BENCH_FANOUT_CLIENTS", 32)
const crossPct = envInt("BENCH_FANOUT_CROSS_PCT", 100)
const durationMs = envInt("BENCH_FANOUT_DURATION_MS", 10_000)
const warmupMs = envInt("BENCH_FANOUT_WARMUP_MS", 3_000)
const extraNodeVars = JSON.parse(process.env.BENCH_FANOUT_NODE_VARS ?? "{}") as Record<string, string>
/** Resting orders a client keeps before it cancels its oldest (as the orders bench). */
const depth = 4
/** After the window, how long the clients may still take to read what was published in it. */
const tailMs = 1_500

type FanoutFigures = typeof fanoutFigures

interface ClientFigures {
  readonly delays: Array<number>
  readonly events: number
  readonly bytes: number
  readonly cpuMs: number
  readonly wallMs: number
}

const streamClients = (url: string, n: number) => {
  const child: ChildProcess = fork(sseClients, [], { env: { ...process.env, BENCH_SSE_URL: url, BENCH_SSE_N: String(n) }, execArgv: ["--import", "tsx"] })
  const ask = <A>(m: string) => new Promise<A>((resolve) => {
    child.once("message", (r) => resolve(r as A))
    child.send(m)
  })
  return {
    child,
    untilOpen: async () => {
      for (let i = 0; ; i++) {
        const { open, closed } = await ask<{ open: number; closed: number }>("open?")
        if (open >= n) return
        if (i === 1_200 || closed > 0) throw new Error(`${open} of ${n} streams opened, ${closed} closed or refused`)
        await new Promise((r) => setTimeout(r, 100))
      }
    },
    reset: () => child.send("reset"),
    done: () => ask<ClientFigures>("done")
  }
}

export const run = async (): Promise<void> => {
  // The orders bench's world, sized here: one market, every client on it, no history.
  process.env.BENCH_ORDERS_CLIENTS = String(clients)
  process.env.BENCH_ORDERS_MARKETS = "1"
  process.env.BENCH_ORDERS_HISTORY_TRADES = "0"
  const { machineCpu, pct, round, setupWorld, stopNode, treeCpuMs } = await import("./orders.ts")
  const db = await createTestDatabase("benchfanout")
  const world = await setupWorld(db, { SHARDLINE_HTTP_CONNECTIONS_PER_IP: String(streamsWanted + 1_000), ...extraNodeVars })
  const { node, ipc, users, markets } = world
  const symbol = markets[0]!.symbol
  const rows: Array<Row> = []
  const detail: Array<Record<string, unknown>> = []
  let streams: ReturnType<typeof streamClients> | undefined
  try {
    console.log(`fanout bench: setup ${(world.setupMs / 1000).toFixed(1)} s; ${clients} order clients on ${symbol}, ${crossPct}% crossing; ${warmupMs} ms warmup + ${durationMs} ms per window`)
    for (const open of [0, streamsWanted]) {
      if (open > 0) {
        streams = streamClients(`${node.baseUrl}/api/public/v1/stream?symbol=${symbol}`, open)
        await streams.untilOpen()
      }
      let cpu0 = 0, wall0 = 0
      let gen0 = process.cpuUsage()
      let machine0 = machineCpu()
      let end: { nodeMs: number; genMs: number; machineMs: number; wallMs: number; loop: { utilizationPct: number; lagP99Ms: number }; fan: FanoutFigures; load: string } | undefined
      const load = await driveLoad({
        url: new URL(node.baseUrl), users, symbolOf: () => symbol, crossPct, depth, warmupMs, durationMs,
        window: {
          open: async () => {
            await ipc("loop", { reset: true })
            await ipc("fanout", { reset: true })
            streams?.reset()
            cpu0 = treeCpuMs(node.pid)
            gen0 = process.cpuUsage()
            machine0 = machineCpu()
            wall0 = Date.now()
          },
          close: async () => {
            const gen = process.cpuUsage(gen0)
            end = {
              nodeMs: treeCpuMs(node.pid) - cpu0, genMs: (gen.user + gen.system) / 1000, machineMs: machineCpu().busyMs - machine0.busyMs,
              wallMs: Date.now() - wall0, loop: await ipc("loop", { reset: true }), fan: await ipc("fanout", { reset: true }), load: loadavg().map((l) => l.toFixed(2)).join(" ")
            }
          }
        }
      })
      await new Promise((r) => setTimeout(r, tailMs))
      const got = streams === undefined ? undefined : await streams.done()
      const e = end!
      const s = e.wallMs / 1000
      const orders = load.counts.rest + load.counts.cross
      const trades = load.counts.cross
      const orderLat = [...load.latencies.rest, ...load.latencies.cross].sort((a, b) => a - b)
      const delays = (got?.delays ?? []).sort((a, b) => a - b)
      const errors = [...load.errors.values()].reduce((a, b) => a + b, 0)
      rows.push({
        streams: open,
        "orders/s": Math.round(orders / s),
        "trades/s": Math.round(trades / s),
        "order p99 ms": round(pct(orderLat, 0.99)),
        errors,
        "trade events": delays.length,
        "events/stream/s": open === 0 ? "" : round(delays.length / open / ((got!.wallMs) / 1000), 1),
        "p50 ms": open === 0 ? "" : pct(delays, 0.5),
        "p99 ms": open === 0 ? "" : pct(delays, 0.99),
        "max ms": open === 0 ? "" : delays[delays.length - 1] ?? NaN,
        "node cores": round(e.nodeMs / e.wallMs),
        "fan-out cores": round(e.fan.cpuMs / e.wallMs, 3),
        "writes/stream/s": open === 0 ? "" : round(e.fan.writes / open / s, 1),
        "µs/write": e.fan.writes === 0 ? "" : round((e.fan.cpuMs * 1000) / e.fan.writes, 2),
        "turns/round": e.fan.rounds === 0 ? "" : round(e.fan.slices / e.fan.rounds, 1),
        "node ms/trade": round(e.nodeMs / Math.max(1, trades)),
        "loop util %": e.loop.utilizationPct,
        "lag p99 ms": e.loop.lagP99Ms,
        "order gen cores": round(e.genMs / e.wallMs),
        "stream clients cores": got === undefined ? "" : round(got.cpuMs / got.wallMs),
        "machine cores": round(e.machineMs / e.wallMs),
        "load avg": e.load
      })
      detail.push({ streams: open, errors: Object.fromEntries(load.errors), clientBytes: got?.bytes, clientEvents: got?.events, fanout: e.fan })
      streams = undefined
    }
    printTable(`SSE fan-out on a working node: ${clients} order clients on ${symbol} (${crossPct}% crossing), publish to each stream's receipt of a trade event (goal: p99 < 100 ms at 5,000 streams, >= 100 trades/s)`, rows)
    const [quiet, loaded] = rows
    if (quiet !== undefined && loaded !== undefined) {
      console.log(`streams' cost to the node: ${round(Number(loaded["node cores"]) - Number(quiet["node cores"]))} cores; orders/s with streams ÷ without: ${round(Number(loaded["orders/s"]) / Number(quiet["orders/s"]), 3)}`)
    }
    writeResults("fanout", { cpus: cpus().length, clients, crossPct, streams: streamsWanted, durationMs, warmupMs, rows, detail })
  } finally {
    streams?.child.kill("SIGKILL")
    await stopNode(node)
    await db.drop()
  }
}
