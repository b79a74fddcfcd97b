// `npm run bench -- matching`: our book (src/exchange/book.ts) against nodejs-order-book on the
// same seeded streams, in one process (bench/parts/matchingStreams.ts describes both shapes).
//
// Deep queues (10k, 100k resting): phase A rests R non-crossing orders; phase B sends MIXED_OPS
// operations. Each engine runs alone; ours five times (the median is reported), the peer once.
//
// Ordinary queues (about 32 orders a level; 1k, 10k, 100k, 1M resting; 60% places, 40% cancels,
// a quarter of places crossing): both engines live in the process together and take the stream
// in chunks of CHUNK ops, alternating, so each meets the caches the other left. Even chunks are
// timed as a whole (throughput), odd chunks op by op (latency). Then, for ours alone: memory at
// R resting and after cancelling everything; and for each engine the heap bytes one op allocates,
// from V8's sampling heap profiler.
//
// Throughput is wall-clock ops/s and, beside it, on-CPU ops/s: ops over the time the main thread
// actually ran (Linux schedstat), which leaves out the moments other processes on a shared box
// held the CPU. The load average is printed with each table.
//
// Throughput runs take no per-order timestamps; latency runs time every op with
// process.hrtime.bigint (its own cost, measured, is included in the figures). Memory: heap plus
// array buffers above a post-GC baseline, sampled every 4096 ops; "peak" is the largest sample.
// Never asserts timing.
import { readFileSync } from "node:fs"
import { loadavg } from "node:os"
import { Session } from "node:inspector/promises"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { defaultBookConfig, OrderBook } from "../src/exchange/book.ts"
import { CountingSink, type Engine, ours, peer } from "./parts/matchingEngines.ts"
import { deepStream, ordinaryStream, ORDERS_PER_LEVEL, type Stream } from "./parts/matchingStreams.ts"
import { printTable, type Row, writeResults } from "./report.ts"

const SEED = 42
const RESTING_SIZES = [10_000, 100_000]
const MIXED_OPS = 200_000
const ORDINARY_SIZES = [1_000, 10_000, 100_000, 1_000_000]
const ORDINARY_MIXED_OPS = 400_000
const CHUNK = 10_000
const OUR_REPEATS = 5 // our runs are short and this box is shared; report the median
const MEMORY_SAMPLE_EVERY = 4096

setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void
const memNow = () => {
  const m = process.memoryUsage()
  return m.heapUsed + m.arrayBuffers
}

/**
 * Nanoseconds this thread has spent on a CPU (Linux schedstat), NaN elsewhere. On a shared box
 * wall time counts the moments other processes hold the CPU; on-CPU time does not, so it is the
 * better estimate of what an idle machine would show. GC helper threads are not counted.
 */
const threadCpuNs = (): number => {
  try {
    return Number(readFileSync("/proc/thread-self/schedstat", "utf8").split(" ")[0])
  } catch {
    return Number.NaN
  }
}

/** What one threadCpuNs() call adds to an interval it brackets. */
const cpuReadCostNs = (() => {
  const a = threadCpuNs()
  for (let i = 0; i < 200; i++) threadCpuNs()
  return (threadCpuNs() - a) / 201
})()

interface PhaseResult {
  readonly opsPerSec: number
  readonly onCpuOpsPerSec: number
  readonly peakMemBytes: number
}

/** Runs ops 0..n-1 without per-op timing, sampling memory above `base`. */
const timed = (engine: Engine, n: number, base: number): PhaseResult => {
  let peak = 0
  const c0 = threadCpuNs()
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) {
    engine.apply(i)
    if ((i & (MEMORY_SAMPLE_EVERY - 1)) === 0) peak = Math.max(peak, memNow() - base)
  }
  const ns = Number(process.hrtime.bigint() - t0)
  const cpu = threadCpuNs() - c0 - cpuReadCostNs
  return { opsPerSec: n / (ns / 1e9), onCpuOpsPerSec: n / (cpu / 1e9), peakMemBytes: Math.max(peak, memNow() - base) }
}

/** Runs ops 0..n-1 timing each; returns sorted latencies in ns. */
const latencies = (engine: Engine, n: number): Float64Array => {
  const out = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint()
    engine.apply(i)
    out[i] = Number(process.hrtime.bigint() - t0)
  }
  return out.sort()
}

const pct = (sorted: Float64Array, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]! / 1000

const timerCostNs = () => {
  const n = 100_000
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) process.hrtime.bigint()
  return Number(process.hrtime.bigint() - t0) / n
}

interface Measured {
  restOpsPerSec: number
  mixedOpsPerSec: number
  mixedOnCpuOpsPerSec: number
  peakMemBytes: number
  p50: number
  p99: number
  p999: number
  max: number
  depth: ReturnType<Engine["depth"]>
}

/** Full GCs with a turn of the event loop between, so dead books' array buffers are released too. */
const settle = async () => {
  gc()
  await new Promise((resolve) => setImmediate(resolve))
  gc()
}

const measure = async (make: () => Engine, stream: Stream): Promise<Measured> => {
  await settle()
  const base = memNow()
  const engine = make()
  engine.load(stream.phaseA)
  const rest = timed(engine, stream.phaseA.length, base)
  engine.load(stream.phaseB)
  const mixed = timed(engine, stream.phaseB.length, base)
  const depth = engine.depth()
  const lat = make()
  lat.load(stream.phaseA)
  for (let i = 0; i < stream.phaseA.length; i++) lat.apply(i)
  lat.load(stream.phaseB)
  const sorted = latencies(lat, stream.phaseB.length)
  return {
    restOpsPerSec: rest.opsPerSec,
    mixedOpsPerSec: mixed.opsPerSec,
    mixedOnCpuOpsPerSec: mixed.onCpuOpsPerSec,
    peakMemBytes: Math.max(rest.peakMemBytes, mixed.peakMemBytes),
    p50: pct(sorted, 0.5),
    p99: pct(sorted, 0.99),
    p999: pct(sorted, 0.999),
    max: sorted[sorted.length - 1]! / 1000,
    depth
  }
}

const median = (runs: Array<Measured>): Measured => {
  const sorted = [...runs].sort((a, b) => a.mixedOpsPerSec - b.mixedOpsPerSec)
  return sorted[Math.floor(sorted.length / 2)]!
}

/**
 * Both engines over both stream shapes (another seed) until their hot code is optimised: a first
 * pass of 20k ops left ours running partly unoptimised code in the first measured run.
 */
const warmUp = () => {
  for (const s of [deepStream(SEED + 1, 5_000, 100_000), ordinaryStream(SEED + 1, 10_000, 200_000)]) {
    for (const make of [ours, peer]) {
      const e = make()
      e.load(s.phaseA)
      for (let i = 0; i < s.phaseA.length; i++) e.apply(i)
      e.load(s.phaseB)
      for (let i = 0; i < s.phaseB.length; i++) e.apply(i)
    }
  }
}

const row = (engine: string, resting: number, m: Measured): Row => ({
  engine,
  resting,
  "rest ops/s": Math.round(m.restOpsPerSec),
  "mixed ops/s": Math.round(m.mixedOpsPerSec),
  "on-CPU ops/s": Math.round(m.mixedOnCpuOpsPerSec),
  "p50 µs": m.p50,
  "p99 µs": m.p99,
  "p99.9 µs": m.p999,
  "max µs": Math.round(m.max),
  "peak MB": m.peakMemBytes / 2 ** 20
})

interface Lane {
  readonly engine: Engine
  restNs: number
  mixedNs: number
  mixedCpuNs: number
  mixedOps: number
  readonly lat: Float64Array
  latN: number
}

/** Runs ops from..to-1 of what `engine` has loaded; returns the nanoseconds taken, wall and on-CPU. */
const runChunk = (engine: Engine, from: number, to: number): { wall: number; cpu: number } => {
  const c0 = threadCpuNs()
  const t0 = process.hrtime.bigint()
  for (let i = from; i < to; i++) engine.apply(i)
  const wall = Number(process.hrtime.bigint() - t0)
  return { wall, cpu: threadCpuNs() - c0 - cpuReadCostNs }
}

/** Runs ops from..to-1 timing each into `into` from `at`; returns the new fill. */
const timeEach = (engine: Engine, from: number, to: number, into: Float64Array, at: number): number => {
  for (let i = from; i < to; i++) {
    const t0 = process.hrtime.bigint()
    engine.apply(i)
    into[at++] = Number(process.hrtime.bigint() - t0)
  }
  return at
}

/** Both engines through `stream` in alternating chunks of CHUNK ops (ours, peer, ours, …). */
const alternate = (stream: Stream) => {
  const lanes: Array<Lane> = [ours(), peer()].map((engine) => ({
    engine,
    restNs: 0,
    mixedNs: 0,
    mixedCpuNs: 0,
    mixedOps: 0,
    lat: new Float64Array(stream.phaseB.length),
    latN: 0
  }))
  for (const l of lanes) l.engine.load(stream.phaseA)
  for (let from = 0; from < stream.phaseA.length; from += CHUNK) {
    const to = Math.min(from + CHUNK, stream.phaseA.length)
    for (const l of lanes) l.restNs += runChunk(l.engine, from, to).wall
  }
  for (const l of lanes) l.engine.load(stream.phaseB)
  for (let from = 0, k = 0; from < stream.phaseB.length; from += CHUNK, k++) {
    const to = Math.min(from + CHUNK, stream.phaseB.length)
    for (const l of lanes) {
      if (k % 2 === 0) {
        const t = runChunk(l.engine, from, to)
        l.mixedNs += t.wall
        l.mixedCpuNs += t.cpu
        l.mixedOps += to - from
      } else l.latN = timeEach(l.engine, from, to, l.lat, l.latN)
    }
  }
  return lanes.map((l) => {
    const sorted = l.lat.subarray(0, l.latN).sort()
    return {
      restOpsPerSec: stream.phaseA.length / (l.restNs / 1e9),
      mixedOpsPerSec: l.mixedOps / (l.mixedNs / 1e9),
      mixedOnCpuOpsPerSec: l.mixedOps / (l.mixedCpuNs / 1e9),
      p50: pct(sorted, 0.5),
      p99: pct(sorted, 0.99),
      p999: pct(sorted, 0.999),
      max: sorted[sorted.length - 1]! / 1000,
      depth: l.engine.depth()
    }
  })
}

/** Our book alone: bytes held with the stream's book resting, and after every order is cancelled. */
const ourMemory = async (stream: Stream) => {
  await settle()
  const base = memNow()
  const book = new OrderBook(defaultBookConfig, new CountingSink())
  for (const ops of [stream.phaseA, stream.phaseB]) {
    for (const op of ops) "place" in op ? book.place(op.place) : book.cancel(op.cancel)
  }
  await settle()
  const open = book.size
  const full = { heapBytes: memNow() - base, storageBytes: book.storageBytes() }
  for (const o of book.snapshot().orders) book.cancel(o.id)
  await settle()
  const empty = { heapBytes: memNow() - base, storageBytes: book.storageBytes() }
  return { open, full, empty, bytesPerOrder: full.storageBytes / open }
}

interface SamplingNode {
  readonly callFrame: { readonly functionName: string; readonly url: string }
  readonly selfSize: number
  readonly children: ReadonlyArray<SamplingNode>
}

const ALLOC_OPS = 100_000
const ALLOC_SAMPLING_BYTES = 128

/**
 * Heap bytes per op, from V8's sampling heap profiler (one sample per ~128 bytes allocated,
 * objects already collected included) over ALLOC_OPS ops of phase B: the bytes allocated under
 * the engine's `apply`, divided by the ops. This is the heap profile the figure comes from, so
 * it names what allocates, not just how much the heap grew: a one-off growth of a table shows
 * up as that, where a per-op allocation would show as the function doing it.
 */
const allocationPerOp = async (make: () => Engine, stream: Stream) => {
  const engine = make()
  engine.load(stream.phaseA)
  for (let i = 0; i < stream.phaseA.length; i++) engine.apply(i)
  engine.load(stream.phaseB)
  const warm = stream.phaseB.length - ALLOC_OPS
  for (let i = 0; i < warm; i++) engine.apply(i)
  const session = new Session()
  session.connect()
  await session.post("HeapProfiler.enable")
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: ALLOC_SAMPLING_BYTES,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true
  })
  for (let i = warm; i < stream.phaseB.length; i++) engine.apply(i)
  const { profile } = await session.post("HeapProfiler.stopSampling")
  session.disconnect()
  const bytes = { total: 0, byFunction: new Map<string, number>() }
  const subtree = (n: SamplingNode): void => {
    bytes.total += n.selfSize
    if (n.selfSize > 0) {
      const where = `${n.callFrame.functionName || "(anonymous)"} ${n.callFrame.url.split("/").pop()}`
      bytes.byFunction.set(where, (bytes.byFunction.get(where) ?? 0) + n.selfSize)
    }
    n.children.forEach(subtree)
  }
  const find = (n: SamplingNode): void => {
    if (n.callFrame.functionName === "apply" && n.callFrame.url.endsWith("matchingEngines.ts")) subtree(n)
    else n.children.forEach(find)
  }
  find(profile.head as unknown as SamplingNode)
  const top = [...bytes.byFunction].sort((a, b) => b[1] - a[1]).slice(0, 3)
  return { ops: ALLOC_OPS, samplingBytes: ALLOC_SAMPLING_BYTES, bytesPerOp: bytes.total / ALLOC_OPS, topAllocators: Object.fromEntries(top) }
}

const ratioRow = (resting: number, mine: Omit<Measured, "peakMemBytes">, theirs: Omit<Measured, "peakMemBytes">): Row => ({
  engine: "ratio ours/peer",
  resting,
  "rest ops/s": mine.restOpsPerSec / theirs.restOpsPerSec,
  "mixed ops/s": mine.mixedOpsPerSec / theirs.mixedOpsPerSec,
  "on-CPU ops/s": mine.mixedOnCpuOpsPerSec / theirs.mixedOnCpuOpsPerSec,
  "p50 µs": mine.p50 / theirs.p50,
  "p99 µs": mine.p99 / theirs.p99,
  "p99.9 µs": mine.p999 / theirs.p999,
  "max µs": mine.max / theirs.max
})

const runDeep = async (timerNs: number) => {
  const rows: Array<Row> = []
  const results: Array<Record<string, unknown>> = []
  for (const resting of RESTING_SIZES) {
    const stream = deepStream(SEED, resting, MIXED_OPS)
    const runs: Array<Measured> = []
    for (let i = 0; i < OUR_REPEATS; i++) runs.push(await measure(ours, stream))
    const mine = median(runs)
    const theirs = await measure(peer, stream)
    const agree = JSON.stringify(mine.depth) === JSON.stringify(theirs.depth)
    const ratio = { ...ratioRow(resting, mine, theirs), "peak MB": mine.peakMemBytes / theirs.peakMemBytes }
    rows.push(row("shardline", resting, mine), row("nodejs-order-book", resting, theirs), ratio)
    const { depth: _a, ...m } = mine
    const { depth: _b, ...t } = theirs
    results.push({ resting, mixedOps: MIXED_OPS, ours: m, peer: t, ratio, finalDepthAgrees: agree })
    console.log(`deep, resting ${resting}: final depth (1000 levels a side) identical in both engines: ${agree ? "yes" : "NO"}`)
  }
  printTable(
    `matching, deep queues: seed ${SEED}, ${MIXED_OPS} mixed ops (1 cancel in 10, ~30% of places marketable); hrtime costs ${timerNs.toFixed(0)} ns; ${load()}`,
    rows
  )
  return results
}

/** What bounds a depth's figures when a goal is missed (docs/matching.md, "The goals, and what bounds them"). */
const boundAt = (resting: number) =>
  resting <= 10_000
    ? "instruction-bound (the book fits in cache; the peer is at its fastest on short queues)"
    : "memory latency (a cancel is two dependent cache misses, index then record; caches and TLB are cold after each peer chunk)"

/** The issue's goals for the ordinary stream, each met or not, with what bounds it when not. */
const printGoals = (results: ReadonlyArray<Record<string, unknown>>) => {
  console.log("\ngoals, ordinary stream (on-CPU; wall-clock in brackets):")
  for (const r of results) {
    const resting = r["resting"] as number
    const ratio = r["ratio"] as Row
    const ours = r["ours"] as Omit<Measured, "peakMemBytes" | "depth">
    const checks = [
      { goal: ">= 15x peer", ok: (ratio["on-CPU ops/s"] as number) >= 15, got: `${(ratio["on-CPU ops/s"] as number).toFixed(1)}x (${(ratio["mixed ops/s"] as number).toFixed(1)}x)` },
      ...(resting >= 100_000
        ? [{ goal: ">= 1M ops/s", ok: ours.mixedOnCpuOpsPerSec >= 1e6, got: `${(ours.mixedOnCpuOpsPerSec / 1e6).toFixed(2)}M (${(ours.mixedOpsPerSec / 1e6).toFixed(2)}M)` }]
        : []),
      { goal: "p99 <= 2 µs", ok: ours.p99 <= 2, got: `${ours.p99.toFixed(2)} µs` }
    ]
    const line = checks.map((c) => `${c.goal}: ${c.got} ${c.ok ? "met" : "NOT met"}`).join("; ")
    const missed = checks.some((c) => !c.ok)
    console.log(`  ${resting}: ${line}${missed ? `; bound: ${boundAt(resting)}` : ""}`)
  }
  console.log("  wall-clock on a shared box is a fraction of on-CPU: see the load average above and docs/matching.md")
}

const runOrdinary = async (timerNs: number) => {
  const rows: Array<Row> = []
  const results: Array<Record<string, unknown>> = []
  const sizesArg = process.argv.find((a) => a.startsWith("--sizes="))
  const sizes = sizesArg === undefined ? ORDINARY_SIZES : sizesArg.slice("--sizes=".length).split(",").map(Number)
  for (const resting of sizes) {
    const stream = ordinaryStream(SEED, resting, ORDINARY_MIXED_OPS)
    await settle()
    const [mine, theirs] = alternate(stream)
    const agree = JSON.stringify(mine!.depth) === JSON.stringify(theirs!.depth)
    const memory = await ourMemory(stream)
    const ratio = ratioRow(resting, mine!, theirs!)
    const mb = (n: number) => n / 2 ** 20
    rows.push(
      { ...row("shardline", resting, { ...mine!, peakMemBytes: memory.full.storageBytes }), "empty MB": mb(memory.empty.storageBytes) },
      { ...row("nodejs-order-book", resting, { ...theirs!, peakMemBytes: Number.NaN }), "empty MB": Number.NaN },
      { ...ratio, "peak MB": Number.NaN, "empty MB": Number.NaN }
    )
    const { depth: _a, ...m } = mine!
    const { depth: _b, ...t } = theirs!
    results.push({ resting, mixedOps: ORDINARY_MIXED_OPS, ours: m, peer: t, ratio, ourMemory: memory, finalDepthAgrees: agree })
    console.log(`ordinary, resting ${resting}: final depth identical in both engines: ${agree ? "yes" : "NO"}; ours holds ${memory.open} orders in ${mb(memory.full.storageBytes).toFixed(1)} MB of arrays (${memory.bytesPerOrder.toFixed(0)} B/order), ${mb(memory.empty.storageBytes).toFixed(2)} MB once all are cancelled`)
  }
  printTable(
    `matching, ordinary queues: seed ${SEED}, ~${ORDERS_PER_LEVEL} orders a level, ${ORDINARY_MIXED_OPS} mixed ops (40% cancels, a quarter of places crossing), engines alternating in chunks of ${CHUNK}; peak MB: our storageBytes() at R resting; empty MB: after cancelling all; hrtime costs ${timerNs.toFixed(0)} ns; ${load()}`,
    rows
  )
  printGoals(results)
  const allocStream = ordinaryStream(SEED, 100_000, 200_000)
  const allocation = { resting: 100_000, ours: await allocationPerOp(ours, allocStream), peer: await allocationPerOp(peer, allocStream) }
  console.log(
    `heap allocated per op (V8 sampling heap profile over ${ALLOC_OPS} mixed ops, 100k resting, ordinary stream): ours ${allocation.ours.bytesPerOp.toFixed(3)} B, nodejs-order-book ${allocation.peer.bytesPerOp.toFixed(0)} B`
  )
  console.log(`  ours' allocations by function: ${JSON.stringify(allocation.ours.topAllocators)}`)
  console.log(`  peer's allocations by function: ${JSON.stringify(allocation.peer.topAllocators)}`)
  return { results, allocation }
}

const load = () => `load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}`

export const run = async (): Promise<void> => {
  console.log(`matching bench starts; ${load()}`)
  const timerNs = timerCostNs()
  warmUp()
  const args = process.argv.slice(2)
  const only = args.includes("--ordinary") ? "ordinary" : args.includes("--deep") ? "deep" : undefined
  const deep = only === "ordinary" ? [] : await runDeep(timerNs)
  const ordinary = only === "deep" ? undefined : await runOrdinary(timerNs)
  writeResults("matching", { seed: SEED, timerCostNs: timerNs, ourRepeats: OUR_REPEATS, deep: { mixedOps: MIXED_OPS, results: deep }, ordinary })
}
