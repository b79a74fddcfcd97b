// The nemesis schedule: which faults, when, for how long, drawn from the seed alone. Pure, so the
// same seed and commit print the same schedule, and a unit test can hold it to its rules.
import type { Rng } from "./rng.ts"

export type Fault =
  | { readonly kind: "kill-node"; readonly node: number; readonly downMs: number }
  | { readonly kind: "restart-postgres" }
  | { readonly kind: "cut-database"; readonly forMs: number }
  | { readonly kind: "ledger-rpc"; readonly mode: "refuse" | "hang"; readonly forMs: number }
  | { readonly kind: "reorg"; readonly depth: number }
  | { readonly kind: "partition-runner"; readonly node: number; readonly forMs: number }

export interface ScheduledFault {
  readonly atMs: number
  readonly fault: Fault
}

export interface ScheduleOptions {
  readonly durationMs: number
  readonly nodes: number
  /** Mean gap between two fault starts; faults may overlap. */
  readonly meanGapMs: number
  /** No fault starts in the last part of the run: the system gets time to settle before the checker reads it. */
  readonly quietTailMs: number
  /** No fault in the first part either: the workload is set up and running first. */
  readonly quietHeadMs: number
}

/** Longest single outage of each kind, ms: long enough to move shards (lock expiry 4 s), short enough to leave time to check. */
export const faultLimits = { killDownMsMax: 20_000, cutMsMax: 12_000, rpcMsMax: 15_000, partitionMsMax: 12_000, reorgDepthMax: 3 } as const

/** The kinds drawn, kill twice as likely as each other kind. */
const faultKinds = ["kill-node", "kill-node", "restart-postgres", "cut-database", "ledger-rpc", "reorg", "partition-runner"] as const

const drawFault = (rng: Rng, nodes: number): Fault => {
  const kind = rng.pick(faultKinds)
  switch (kind) {
    case "kill-node": return { kind, node: rng.int(0, nodes - 1), downMs: rng.int(2_000, faultLimits.killDownMsMax) }
    case "restart-postgres": return { kind }
    case "cut-database": return { kind, forMs: rng.int(2_000, faultLimits.cutMsMax) }
    case "ledger-rpc": return { kind, mode: rng.pick(["refuse", "hang"] as const), forMs: rng.int(2_000, faultLimits.rpcMsMax) }
    case "reorg": return { kind, depth: rng.int(1, faultLimits.reorgDepthMax) }
    case "partition-runner": return { kind, node: rng.int(0, nodes - 1), forMs: rng.int(2_000, faultLimits.partitionMsMax) }
  }
}

export const makeSchedule = (rng: Rng, o: ScheduleOptions): ReadonlyArray<ScheduledFault> => {
  const out: Array<ScheduledFault> = []
  const lastStart = o.durationMs - o.quietTailMs
  for (let at = o.quietHeadMs + rng.int(0, o.meanGapMs); at < lastStart; at += rng.int(Math.floor(o.meanGapMs / 2), Math.floor((o.meanGapMs * 3) / 2))) {
    out.push({ atMs: at, fault: drawFault(rng, o.nodes) })
  }
  return out
}

/** How long a fault keeps its window open (a restart or reorg is instant; its effects are given a little time). */
export const faultSpanMs = (f: Fault): number => {
  switch (f.kind) {
    case "kill-node": return f.downMs
    case "restart-postgres": return 10_000
    case "cut-database": return f.forMs
    case "ledger-rpc": return f.forMs
    case "reorg": return 2_000
    case "partition-runner": return f.forMs
  }
}

export const describeFault = (f: Fault): string => {
  switch (f.kind) {
    case "kill-node": return `kill -9 node${f.node + 1}, restart after ${f.downMs} ms`
    case "restart-postgres": return "restart Postgres (kill -9 the postmaster; its supervisor starts it again)"
    case "cut-database": return `cut every database connection for ${f.forMs} ms`
    case "ledger-rpc": return `ledger RPC ${f.mode === "hang" ? "hangs" : "refuses"} for ${f.forMs} ms`
    case "reorg": return `reorg the ledger by ${f.depth} block${f.depth > 1 ? "s" : ""} (invalidateblock)`
    case "partition-runner": return `partition node${f.node + 1}'s runner from the others for ${f.forMs} ms`
  }
}
