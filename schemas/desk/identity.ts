// Entities of desk wallet identity. DeskLinkToken (entity id: the link token's SHA-256 hex) owns
// one single-use token: Mint and its durable Expire are persisted; Redeem is not, on purpose: its
// reply carries the member's new partner key, which must never rest in cluster storage (a lost
// reply leaves the token used; the member scans a new QR). LinkedWallet (entity id: the member
// id) watches the member's linked xpub: Watch starts it after a link, Sample is its hourly
// durable timer.
import { ClusterSchema, DeliverAt, Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { DateTime, PrimaryKey, Schema } from "effect"
import { ExpireLinkToken, LinkRefused, MintLinkToken } from "../common/linkToken.ts"
import { WalletLinked, WalletLinkEnvelope } from "./walletLink.ts"

export class RedeemDeskLink extends Schema.Class<RedeemDeskLink>("DeskLinkToken/Redeem")({
  envelope: WalletLinkEnvelope
}) {}

export const DeskLinkToken = Entity.make("DeskLinkToken", [
  Rpc.make("Mint", { payload: MintLinkToken }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Expire", { payload: ExpireLinkToken }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Redeem", { payload: RedeemDeskLink, success: WalletLinked, error: LinkRefused })
])

export class WatchWallet extends Schema.Class<WatchWallet>("LinkedWallet/Watch")({
  /** When the wallet was linked: one Watch per link. */
  linkedAtMs: Schema.Number
}) {
  [PrimaryKey.symbol]() {
    return `watch:${this.linkedAtMs}`
  }
}

export class SampleWallet extends Schema.Class<SampleWallet>("LinkedWallet/Sample")({
  /** The slot this timer is for (a multiple of the sampling interval, Unix ms). */
  slotMs: Schema.Number
}) {
  // One timer per slot: a Watch and a Sample that both schedule the next slot make one message.
  [PrimaryKey.symbol]() {
    return `sample:${this.slotMs}`
  }
  [DeliverAt.symbol]() {
    return DateTime.unsafeMake(this.slotMs)
  }
}

export const LinkedWallet = Entity.make("LinkedWallet", [
  Rpc.make("Watch", { payload: WatchWallet }).annotate(ClusterSchema.Persisted, true),
  Rpc.make("Sample", { payload: SampleWallet })
    .annotate(ClusterSchema.Persisted, true)
    .annotate(ClusterSchema.Uninterruptible, true)
])
