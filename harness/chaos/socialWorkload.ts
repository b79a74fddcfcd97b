// The social network's part of the chaos workload: members publish (with an Idempotency-Key, so
// a retried publish is the same post), comment on each other's posts, renew and take down their
// own, through whichever nodes are alive. Accounts and sessions are made as `social account
// create` and a wallet sign-in make them.
import { randomUUID } from "node:crypto"
import { createAccount } from "../../src/social/accounts/Accounts.ts"
import { mintSession } from "../../src/platform/signin/sessionStore.ts"
import { runWithDatabase } from "../withDatabase.ts"
import { call, type History, type Outcome } from "./history.ts"
import type { Rng } from "./rng.ts"
import type { World } from "./world.ts"

const REQUEST_DEADLINE_MS = 90_000

export interface Member {
  readonly name: string
  readonly address: string
  readonly token: string
}

export interface SocialPost {
  readonly id: string
  readonly author: string
  readonly metadataCid: string
  takenDown: boolean
}

export interface SocialRun {
  readonly posts: Array<SocialPost>
  readonly stats: { published: number; comments: number; renewals: number; takedowns: number; neverAnswered: number }
  /** The requests that got no definite answer within their deadline (subject and key, for the checker). */
  readonly unanswered: Array<{ readonly op: string; readonly subject: string; readonly key: string }>
}

/** Members with sessions; the fee sponsor that pays each stamping address its first coin is funded by the exchange's setup. */
export const setUpSocial = async (world: World, members: number): Promise<ReadonlyArray<Member>> => {
  const out: Array<Member> = []
  for (let i = 0; i < members; i++) {
    const account = await runWithDatabase(world.directUrl, createAccount(`chaos${i}`))
    const session = await runWithDatabase(world.directUrl, mintSession("social", account.address))
    out.push({ name: `m${i}`, address: account.address, token: session.token })
  }
  return out
}

type Answered = Extract<Outcome, { kind: "answer" }>

const send = async (world: World, run: SocialRun, history: History, rng: Rng, clock: () => number, m: Member, op: string, subject: string, path: string, body: unknown, key: string): Promise<Answered | undefined> => {
  const deadline = Date.now() + REQUEST_DEADLINE_MS
  for (;;) {
    const live = world.live()
    const node = live.length > 0 ? rng.pick(live) : undefined
    const outcome: Outcome = node === undefined ? { kind: "unknown", detail: "no node alive" } : await call(`${node.socialUrl}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${m.token}`, "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify(body ?? {})
    })
    history.add({ atMs: clock(), client: m.name, op, node: node?.name ?? "-", subject, params: { path, key }, outcome })
    if (outcome.kind === "answer" && outcome.status < 500) return outcome
    if (Date.now() > deadline) {
      run.unanswered.push({ op, subject, key })
      return undefined
    }
    await new Promise((r) => setTimeout(r, 300 + rng.int(0, 700)))
  }
}

export const runMember = async (world: World, m: Member, run: SocialRun, history: History, rng: Rng, clock: () => number, stopAtMs: number) => {
  for (let i = 0; clock() < stopAtMs; i++) {
    const mine = run.posts.filter((p) => p.author === m.address && !p.takenDown)
    const others = run.posts.filter((p) => p.author !== m.address && !p.takenDown)
    const roll = rng.next()
    if (roll < 0.55 || mine.length === 0) {
      const key = `${m.name}-p${i}`
      const out = await send(world, run, history, rng, clock, m, "publish", `post ${key}`, "/api/social/posts", { body: `chaos ${m.name} ${i} ${randomUUID()}` }, key)
      if (out === undefined) run.stats.neverAnswered++
      else if (out.status === 200 || out.status === 201 || out.status === 202) {
        const b = out.body as { postId: string; metadataCid?: string }
        run.stats.published++
        run.posts.push({ id: b.postId, author: m.address, metadataCid: b.metadataCid ?? "", takenDown: false })
      }
    } else if (roll < 0.75 && others.length > 0) {
      const p = rng.pick(others)
      const key = `${m.name}-c${i}`
      const out = await send(world, run, history, rng, clock, m, "comment", `post ${p.id}`, `/api/social/posts/${p.id}/comments`, { body: `comment ${m.name} ${i}` }, key)
      if (out === undefined) run.stats.neverAnswered++
      else if (out.status < 300) run.stats.comments++
    } else if (roll < 0.9) {
      const p = rng.pick(mine)
      const out = await send(world, run, history, rng, clock, m, "renew", `post ${p.id}`, `/api/social/posts/${p.id}/renew`, undefined, `${m.name}-r${i}`)
      if (out === undefined) run.stats.neverAnswered++
      else if (out.status < 300) run.stats.renewals++
    } else {
      const p = rng.pick(mine)
      const out = await send(world, run, history, rng, clock, m, "takedown", `post ${p.id}`, `/api/social/posts/${p.id}/takedown`, undefined, `${m.name}-t${i}`)
      if (out === undefined) run.stats.neverAnswered++
      else if (out.status < 300) {
        run.stats.takedowns++
        p.takenDown = true
      }
    }
    await new Promise((r) => setTimeout(r, rng.int(300, 1500)))
  }
}
