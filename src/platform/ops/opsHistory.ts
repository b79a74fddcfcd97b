// The live page's history (issue 26): one compact sample per ops read, rates from the difference
// of two cluster-wide totals, kept for the last 15 minutes in memory. Pure: no clock, no I/O.
import type { NodeStats, OpsView } from "./OpsView.ts"

/** How often the page's feed reads the view, ms; and how many samples make 15 minutes. */
export const sampleIntervalMs = 2000
export const historySamplesMax = (15 * 60_000) / sampleIntervalMs

export interface Sample {
  readonly seq: number
  /** Epoch ms of the read. */
  readonly at: number
  /** Messages handled per second, by entity type (cluster-wide). */
  readonly messagesPerSec: Record<string, number>
  /** Messages in hand, by entity type (cluster-wide). */
  readonly inFlight: Record<string, number>
  readonly liveEntities: Record<string, number>
  /** Requests, 4xx and 5xx per second, by listener (cluster-wide). */
  readonly http: Record<string, { readonly rps: number; readonly clientErrors: number; readonly serverErrors: number }>
  readonly pendingTimers: number
  /** Postgres connections in use (active) over every node, and their pools' size. */
  readonly dbActive: number
  readonly dbPool: number
  /** Shards held per node. */
  readonly shards: Record<string, number>
  /** The ledger's tip as the first node reporting it saw it. */
  readonly ledgerHeight: number | null
}

/** Cluster-wide cumulative counts a rate is computed from. */
export interface Totals {
  readonly messages: Record<string, number>
  readonly http: Record<string, { readonly requests: number; readonly clientErrors: number; readonly serverErrors: number }>
}

const sumOver = (nodes: ReadonlyArray<{ stats: NodeStats }>, pick: (s: NodeStats) => Record<string, number> | undefined) => {
  const out: Record<string, number> = {}
  for (const n of nodes) for (const [k, v] of Object.entries(pick(n.stats) ?? {})) out[k] = (out[k] ?? 0) + v
  return out
}

export const totalsOf = (view: Pick<OpsView, "nodes">): Totals => {
  const http: Record<string, { requests: number; clientErrors: number; serverErrors: number }> = {}
  for (const n of view.nodes) {
    for (const [service, t] of Object.entries(n.stats.http ?? {})) {
      const o = (http[service] ??= { requests: 0, clientErrors: 0, serverErrors: 0 })
      o.requests += t.requests
      o.clientErrors += t.clientErrors
      o.serverErrors += t.serverErrors
    }
  }
  return { messages: sumOver(view.nodes, (s) => s.messages), http }
}

/** Per second between two totals; a counter that went down (a node restarted) counts from 0. */
const rate = (now: number, before: number | undefined, seconds: number) =>
  seconds <= 0 ? 0 : Math.max(0, now - (before !== undefined && before <= now ? before : 0)) / seconds

export const sampleOf = (
  seq: number,
  at: number,
  view: Pick<OpsView, "nodes" | "liveEntities" | "pendingTimers" | "chains">,
  previous: { readonly at: number; readonly totals: Totals } | undefined
): { readonly sample: Sample; readonly totals: Totals } => {
  const totals = totalsOf(view)
  const seconds = previous === undefined ? 0 : (at - previous.at) / 1000
  const messagesPerSec = Object.fromEntries(Object.entries(totals.messages).map(([type, n]) => [type, rate(n, previous?.totals.messages[type], seconds)]))
  const http = Object.fromEntries(Object.entries(totals.http).map(([service, t]) => {
    const p = previous?.totals.http[service]
    return [service, { rps: rate(t.requests, p?.requests, seconds), clientErrors: rate(t.clientErrors, p?.clientErrors, seconds), serverErrors: rate(t.serverErrors, p?.serverErrors, seconds) }]
  }))
  const sample: Sample = {
    seq,
    at,
    messagesPerSec,
    inFlight: sumOver(view.nodes, (s) => s.inFlight),
    liveEntities: { ...view.liveEntities },
    http,
    pendingTimers: view.pendingTimers.count,
    dbActive: view.nodes.reduce((n, x) => n + (x.stats.db?.connections["active"] ?? 0), 0),
    dbPool: view.nodes.reduce((n, x) => n + (x.stats.db?.poolSize ?? 0), 0),
    shards: Object.fromEntries(view.nodes.map((n) => [n.node, n.stats.shards])),
    ledgerHeight: view.chains.find((c) => c.chain === "ledger" && c.height !== null)?.height ?? null
  }
  return { sample, totals }
}

/** The history with one more sample, the oldest dropped beyond `max`. */
export const appendSample = (history: ReadonlyArray<Sample>, sample: Sample, max = historySamplesMax): ReadonlyArray<Sample> =>
  history.length < max ? [...history, sample] : [...history.slice(history.length - max + 1), sample]

/** The samples after `lastSeq` (a reconnecting page's Last-Event-ID), or all of them. */
export const samplesAfter = (history: ReadonlyArray<Sample>, lastSeq: number | undefined): ReadonlyArray<Sample> =>
  lastSeq === undefined ? history : history.filter((s) => s.seq > lastSeq)
