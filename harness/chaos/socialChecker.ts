// The social network's rules at the end of a chaos run: every acknowledged post exists, every
// stamp it is owed is on the best chain exactly once, and no content is served after its takedown.
import type { History } from "./history.ts"
import type { Violation } from "./checker.ts"
import type { SocialRun } from "./socialWorkload.ts"
import type { World } from "./world.ts"

/** Tags a post may carry more than once with the same CID: each renewal stamps R again. */
const repeatable = new Set(["R"])

export const checkSocial = async (world: World, run: SocialRun, history: History): Promise<{ violations: ReadonlyArray<Violation>; counts: Record<string, number> }> => {
  const v: Array<Violation> = []
  const add = (rule: string, detail: string, subject?: string) => v.push({ rule, detail, history: subject === undefined ? [] : history.about(subject) })
  const ids = new Set((await world.query<{ id: string }>(`SELECT id::text FROM social_posts`)).map((r) => r.id))
  for (const e of history.entries) {
    if (e.op === "publish" && e.outcome.kind === "answer" && e.outcome.status < 300) {
      const id = (e.outcome.body as any)?.postId
      if (!ids.has(id)) add("every acknowledged post exists", `${e.subject} acknowledged as ${id}, not stored`, e.subject)
    }
  }
  const [pending] = await world.query<{ n: number }>(`SELECT count(*)::int AS n FROM social_stamping_pending`)
  if (pending!.n > 0) add("every owed stamp sent", `${pending!.n} posts still have stamps pending`)
  // Each unpaid owed stamp on its own, with what the cluster still holds for its post (a timer or a
  // Change not processed), so the violation shows where the stamp was dropped.
  const unpaid = await world.query<{ id: string; post_id: string; tag: string; request_id: string | null; created_at: Date; pending: boolean }>(`
    SELECT o.id::text, o.post_id::text, o.tag, o.request_id, o.created_at,
      EXISTS (SELECT 1 FROM social_stamping_pending p WHERE p.post_id = o.post_id) AS pending
    FROM social_owed_stamps o WHERE o.txid IS NULL ORDER BY o.id`)
  for (const o of unpaid) {
    const messages = await world.query<{ tag: string; processed: boolean; n: number }>(`SELECT tag, processed, count(*)::int AS n FROM cluster_messages
      WHERE entity_type = 'Post' AND entity_id = $1 GROUP BY tag, processed ORDER BY tag`, [o.post_id])
    add("every owed stamp sent", `post ${o.post_id}: owed ${o.tag} (row ${o.id}, request ${o.request_id ?? "-"}, owed at ${o.created_at.toISOString()}) has no transaction; `
      + `pending row: ${o.pending ? "yes" : "no"}; the post's messages: ${messages.map((m) => `${m.tag}${m.processed ? "" : " (unprocessed)"} ×${m.n}`).join(", ") || "none"}`, `post ${o.post_id}`)
  }
  const stamps = await world.query<{ txid: string; post_id: string | null; tag: string; cid: string }>(`SELECT txid, post_id::text, tag, cid FROM social_stamps`)
  const seen = new Map<string, number>()
  for (const s of stamps) {
    if (s.post_id === null || repeatable.has(s.tag)) continue
    const k = `${s.post_id} ${s.tag} ${s.cid}`
    seen.set(k, (seen.get(k) ?? 0) + 1)
  }
  for (const [k, n] of seen) if (n > 1) add("every stamp exactly once", `${k}: ${n} stamps`, `post ${k.split(" ")[0]}`)
  // A request retried with its key for its whole deadline and never answered below 500: the service
  // lost it (each fault lasts seconds, the deadline is minutes).
  for (const u of run.unanswered) add("every request answered", `${u.op} ${u.subject} (key ${u.key}): no answer below 500 within the request's deadline`, u.subject)
  let onChain = 0
  for (const s of stamps) {
    const tx = await world.litecoind.rpc<{ confirmations?: number }>("getrawtransaction", s.txid, true).catch(() => undefined)
    if (tx === undefined || (tx.confirmations ?? 0) < 1) add("every stamp on the best chain", `${s.tag} ${s.cid} (${s.txid}): ${tx === undefined ? "unknown to the chain" : "not confirmed"}`, s.post_id === null ? undefined : `post ${s.post_id}`)
    else onChain++
  }
  const node = world.live()[0]
  let checkedTakedowns = 0
  if (node !== undefined) {
    for (const p of run.posts.filter((x) => x.takenDown && x.metadataCid !== "")) {
      const res = await fetch(`${node.socialUrl}/api/stream/${p.metadataCid}`).catch(() => undefined)
      checkedTakedowns++
      if (res?.status === 200) add("no content served after its takedown", `post ${p.id}: /api/stream/${p.metadataCid} answers 200`, `post ${p.id}`)
      await res?.body?.cancel()
    }
  }
  return { violations: v, counts: { "posts acknowledged": run.stats.published, comments: run.stats.comments, renewals: run.stats.renewals, takedowns: run.stats.takedowns, "social requests never answered": run.stats.neverAnswered, "stamps on chain": onChain, "takedowns checked": checkedTakedowns } }
}
