// The status body (pure): what this node serves so far, honestly.
import type { DeskStatus } from "../../../schemas/desk/transparency.ts"

/** Spec parts not served yet; shrinks as they land. */
export const notYetLive = [
  "reserves", "reserves/history", "supply", "cashout", "stables", "wrap", "callbacks", "webhooks", "attestations"
] as const

export const deskStatus = (now: number): DeskStatus => ({ service: "token-desk", status: "ok", serverTime: now, notYetLive: [...notYetLive] })
