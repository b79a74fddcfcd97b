// A post's hosting as a pure state machine (spec: "States and transitions"): paid for a period;
// when the period ends unpaid, a grace window (SHARDLINE_SOCIAL_GRACE_MS) in which it is still
// served; then unpinned. Takedown and moderation end it at once. Renewal pays another period.
import type { PostState } from "../../../schemas/social/post.ts"

export interface Hosting {
  readonly state: PostState
  readonly paidUntilMs: number
}

/** Where hosting stands at `nowMs`, and when the timer should look again (undefined: never). */
export const hostingAt = (h: Hosting, graceMs: number, nowMs: number): { readonly state: PostState; readonly dueAtMs: number | undefined } => {
  if (h.state === "taken_down" || h.state === "moderated" || h.state === "unpinned") return { state: h.state, dueAtMs: undefined }
  // Member-signed posts: the paid period starts only when the stamps are signed (memberSigned.ts).
  if (h.state === "awaiting_signature" || h.state === "unsigned") return { state: h.state, dueAtMs: undefined }
  if (nowMs < h.paidUntilMs) return { state: "hosted", dueAtMs: h.paidUntilMs }
  const graceEnd = h.paidUntilMs + graceMs
  if (nowMs < graceEnd) return { state: "grace", dueAtMs: graceEnd }
  return { state: "unpinned", dueAtMs: undefined }
}

/** A renewal: another period from the end of the paid one, or from now if that is past. */
export const renewed = (h: Hosting, periodMs: number, nowMs: number): Hosting => ({
  state: "hosted",
  paidUntilMs: Math.max(h.paidUntilMs, nowMs) + periodMs
})

/** Whether the gateway serves a post's content in this state. */
export const isServed = (state: PostState): boolean => state === "hosted" || state === "grace"

/** Takedown and moderation are final; renewal is refused after them. */
export const isClosed = (state: PostState): boolean => state === "taken_down" || state === "moderated"
