// What /ops shows when no SHARDLINE_OPS_TOKEN is configured. The endpoint is then open to anyone
// who can reach the loopback listener (every local user and process), so it keeps what ops needs
// to see the cluster (runners, shards, entities, timers, chains, counts) and leaves out what
// tells about customers and money: the order references of partner webhook events, and the fee
// sponsor's address and balance. With a token configured the full view answers (to its holder).
import type { FeeSponsorReport, NodeStats, OpsView } from "./OpsView.ts"

/** Said in the public view, so a reader knows the gaps are deliberate and how to close them. */
export const withheldNote =
  "partner webhook order references and the fee sponsor's address and balance are shown only with SHARDLINE_OPS_TOKEN configured (and presented as a bearer token)"

export type PublicFeeSponsor = Omit<FeeSponsorReport, "address" | "sats"> & { readonly node: string }

export interface PublicOpsView extends Omit<OpsView, "access" | "nodes" | "feeSponsor" | "partnerWebhooks"> {
  readonly access: "public"
  readonly withheld: string
  readonly nodes: ReadonlyArray<{ node: string; updatedAt: string; stats: Omit<NodeStats, "feeSponsor"> }>
  /** When the sponsor was last read, without what it holds. */
  readonly feeSponsor: PublicFeeSponsor | null
  readonly partnerWebhooks: {
    readonly lastDay: number
    readonly latest: ReadonlyArray<Omit<OpsView["partnerWebhooks"]["latest"][number], "order">>
  }
}

const withoutSponsor = ({ feeSponsor: _, ...stats }: NodeStats): Omit<NodeStats, "feeSponsor"> => stats

/** Pure: the full view minus references, addresses and balances. */
export const publicOpsView = (view: OpsView): PublicOpsView => ({
  ...view,
  access: "public",
  withheld: withheldNote,
  nodes: view.nodes.map((n) => ({ ...n, stats: withoutSponsor(n.stats) })),
  feeSponsor: view.feeSponsor === null ? null : { node: view.feeSponsor.node, checkedAt: view.feeSponsor.checkedAt },
  partnerWebhooks: {
    lastDay: view.partnerWebhooks.lastDay,
    latest: view.partnerWebhooks.latest.map(({ order: _, ...event }) => event)
  }
})
