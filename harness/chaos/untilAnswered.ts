// A client's request through whichever node is alive, sent again with the same parameters (the
// same client order id or Idempotency-Key) until it is answered below 500 or its deadline passes,
// as a real client does after a timeout or a 5xx. Every attempt goes into the history. The
// exchange's and the desk's workloads share it; each keeps its own pause, so a seed's streams
// draw exactly as before.
import type { NodeProcess } from "../nodeProcess.ts"
import type { History, Outcome } from "./history.ts"
import type { Rng } from "./rng.ts"
import type { World } from "./world.ts"

/** How long a client keeps asking before it counts the request as never answered. */
export const REQUEST_DEADLINE_MS = 90_000

export type Answered = Extract<Outcome, { kind: "answer" }>

export interface Attempted {
  readonly client: string
  readonly op: string
  readonly subject: string
  readonly params: Record<string, string>
  readonly send: (node: NodeProcess) => Promise<Outcome>
}

/** The pause between two attempts: `minMs` plus up to `spreadMs` drawn from the client's stream. */
export interface Pause {
  readonly minMs: number
  readonly spreadMs: number
}

export const untilAnswered = async (world: World, history: History, rng: Rng, clock: () => number, what: Attempted, pause: Pause): Promise<Answered | undefined> => {
  const deadline = Date.now() + REQUEST_DEADLINE_MS
  for (;;) {
    const live = world.live()
    const node = live.length > 0 ? rng.pick(live) : undefined
    const outcome: Outcome = node === undefined ? { kind: "unknown", detail: "no node alive" } : await what.send(node)
    history.add({ atMs: clock(), client: what.client, op: what.op, node: node?.name ?? "-", subject: what.subject, params: what.params, outcome })
    if (outcome.kind === "answer" && outcome.status < 500) return outcome
    if (Date.now() > deadline) return undefined
    await new Promise((r) => setTimeout(r, pause.minMs + rng.int(0, pause.spreadMs)))
  }
}
