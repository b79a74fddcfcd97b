// The member's signed stamps (docs/social.md, "Member-signed stamps"): checked against the
// transactions built (psbt.ts), recorded in social_stamps with the action's effect, then broadcast;
// and the end of a signature window, when an action never signed lapses and is refunded.
import { SqlClient } from "@effect/sql"
import { Transaction } from "bitcoinjs-lib"
import { Effect, Either, Option } from "effect"
import type { PostRow } from "./Composer.ts"
import type { SignatureDeadline, SignedStamps, SubmitSignatures } from "../../../schemas/social/post.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { SocialConfig } from "../SocialConfig.ts"
import { FeeSponsor } from "../../platform/ledger/FeeSponsor.ts"
import { isClosed, renewed } from "./hosting.ts"
import { outpointOf, signedTransactionOf, verifySignedStamp } from "./psbt.ts"
import { type Action, accountOf, asRefusal, lastRequest, loadPost, refuse, type RequestRow, requestById, type UnsignedRow, unsignedRows } from "./signatureRequests.ts"
import { refuseOrRetry } from "../../platform/entity/refuseOrRetry.ts"

/** Sends recorded stamps (the funding first: a lost parent goes back before its children). */
const broadcastAll = (fundingHex: string, hexes: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const ledger = yield* UtxoLedger
    const sponsor = yield* FeeSponsor
    yield* ledger.broadcast(fundingHex).pipe(Effect.ignore)
    for (const hex of hexes) {
      yield* ledger.broadcast(hex).pipe(
        Effect.catchTag("LedgerTxRejected", (e) => e.code === "missing-inputs"
          ? Effect.zipRight(sponsor.repair, Effect.zipRight(ledger.broadcast(fundingHex).pipe(Effect.ignore), ledger.broadcast(hex)))
          : Effect.fail(e)),
        Effect.catchTag("LedgerTxRejected", (e) => (e.code === "already-known" ? Effect.succeed("") : Effect.fail(e)))
      )
    }
  })

const signedView = (post: PostRow, request: RequestRow, rows: ReadonlyArray<UnsignedRow>, sent: Either.Either<unknown, unknown>): SignedStamps => {
  const proof = rows.find((r) => r.tag === "CHV1P") ?? rows.at(-1)
  return {
    postId: post.id, shortId: post.short_id, state: post.state, action: request.action,
    metadataCid: request.action === "metadata" ? rows[0]?.cid ?? post.metadata_cid : post.metadata_cid,
    txHash: proof?.txid ?? null,
    stamps: rows.map((r) => ({ tag: r.tag, cid: r.cid, txid: r.txid ?? "", opReturn: r.op_return })),
    stamping: Either.isRight(sent) ? "done" : "pending"
  }
}

/** The signed transactions of the request, decoded; the first that does not decode is refused. */
const decodeItems = (s: SubmitSignatures) =>
  Effect.gen(function*() {
    const txs: Array<Transaction> = []
    for (const [i, item] of s.items.entries()) {
      const tx = signedTransactionOf(item)
      if (Either.isLeft(tx)) return yield* refuse("invalid_parameter", `items[${i}]: ${tx.left}`)
      txs.push(tx.right)
    }
    return txs
  })

/** The author's request in `state`, or (requestId) a member-signed comment's. */
const namedRequest = (s: SubmitSignatures, post: PostRow, state: RequestRow["state"]) => s.requestId === undefined
  ? lastRequest(post.id, state)
  : Effect.map(requestById(s.requestId), Option.filter((r) => r.post_id === post.id && r.action === "comment" && r.state === state))

/** A retry of signatures already taken: the recorded bytes go out again; anything else has nothing to sign. */
const resendSigned = (s: SubmitSignatures, post: PostRow, txs: ReadonlyArray<Transaction>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const signed = yield* namedRequest(s, post, "signed")
    if (Option.isSome(signed)) {
      const rows = yield* unsignedRows(signed.value.id)
      const ids = new Set(rows.map((r) => r.txid))
      if (txs.length > 0 && txs.every((t) => ids.has(t.getId()))) {
        const recorded = yield* sql<{ tx_hex: string }>`SELECT tx_hex FROM social_stamps WHERE txid IN ${sql.in(rows.map((r) => r.txid!))} ORDER BY seq`
        const sent = yield* Effect.either(broadcastAll(signed.value.funding_hex, recorded.map((r) => r.tx_hex)))
        return { reply: signedView(post, signed.value, rows, sent), changed: false, action: signed.value.action, unsent: Either.isLeft(sent) ? sent.left : undefined }
      }
    }
    return yield* refuse("nothing_to_sign", "no action of this post waits for signatures")
  })

/** Each signed transaction matched to the stamp it spends (by outpoint) and checked against it; by stamp number. */
const matchSignatures = (request: RequestRow, rows: ReadonlyArray<UnsignedRow>, txs: ReadonlyArray<Transaction>) =>
  Effect.gen(function*() {
    const params = (yield* UtxoLedger).params
    const byOutpoint = new Map(rows.map((r) => [outpointOf(Transaction.fromHex(r.unsigned_hex)) ?? "", r]))
    if (txs.length !== rows.length) return yield* refuse("invalid_parameter", `items: this ${request.action} has ${rows.length} stamps to sign, ${txs.length} were sent`)
    const matched = new Map<number, Transaction>()
    for (const [i, tx] of txs.entries()) {
      const row = byOutpoint.get(outpointOf(tx) ?? "")
      if (row === undefined || matched.has(row.n)) return yield* refuse("invalid_parameter", `items[${i}]: spends no coin of this action's stamps (or one twice)`)
      const ok = verifySignedStamp(params, row.unsigned_hex, row.address, tx)
      if (Either.isLeft(ok)) return yield* refuse("invalid_parameter", `items[${i}] (${row.tag}): ${ok.left}`)
      matched.set(row.n, tx)
    }
    return matched
  })

/** The action's effect on the post, once its stamps are recorded (in the same transaction). */
const takeEffect = (
  post: PostRow,
  locked: { state: PostRow["state"]; paid_until_ms: string },
  request: RequestRow,
  author: string,
  signed: { rows: ReadonlyArray<UnsignedRow>; matched: ReadonlyMap<number, Transaction> }
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* SocialConfig
    const nowMs = Date.now()
    switch (request.action) {
      case "publish":
        yield* sql`UPDATE social_posts SET state = 'hosted', paid_until_ms = ${nowMs + config.socialHostingPeriodMs} WHERE id = ${post.id}`
        break
      case "renew": {
        const next = renewed({ state: locked.state, paidUntilMs: Number(locked.paid_until_ms) }, config.socialHostingPeriodMs, nowMs)
        yield* sql`UPDATE social_posts SET state = 'hosted', paid_until_ms = ${next.paidUntilMs} WHERE id = ${post.id}`
        break
      }
      case "takedown":
        yield* sql`UPDATE social_posts SET state = 'taken_down', timer_n = timer_n + 1 WHERE id = ${post.id}`
        break
      case "comment": {
        // X (the body) and XM (the manifest); a request opened before XM existed has only an X, which carried the manifest.
        const x = signed.rows.find((r) => r.tag === "X") ?? signed.rows[0]!
        const manifestCid = (signed.rows.find((r) => r.tag === "XM") ?? x).cid
        yield* sql`INSERT INTO social_comments (id, post_id, author, body_cid, manifest_cid, address, derivation_path, txid)
          VALUES (${request.id}, ${post.id}, ${author}, ${request.body_cid}, ${manifestCid}, ${x.address}, ${x.derivation_path}, ${signed.matched.get(x.n)!.getId()})`
        break
      }
      case "metadata":
        yield* sql`UPDATE social_posts SET body = ${request.body ?? post.body}, tags = ${JSON.stringify(request.tags ?? post.tags)}::jsonb WHERE id = ${post.id}`
        break
    }
  })

/** In one transaction: the request still waiting and the post open, the stamps recorded, the action in effect. */
const recordSigned = (post: PostRow, request: RequestRow, rows: ReadonlyArray<UnsignedRow>, matched: ReadonlyMap<number, Transaction>, author: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.gen(function*() {
    const [locked] = yield* sql<{ state: string }>`SELECT state FROM social_signature_requests WHERE id = ${request.id} FOR UPDATE`
    if (locked?.state !== "awaiting") return yield* refuse("nothing_to_sign", "this action is no longer waiting for signatures")
    const [now] = yield* sql<{ state: PostRow["state"]; paid_until_ms: string }>`SELECT state, paid_until_ms::text AS paid_until_ms FROM social_posts WHERE id = ${post.id} FOR UPDATE`
    if (now === undefined || isClosed(now.state) || now.state === "unsigned") return yield* refuse("post_closed", `the post is ${now?.state ?? "gone"}`)
    for (const row of rows) {
      const tx = matched.get(row.n)!
      yield* sql`INSERT INTO social_stamps (txid, address, seq, post_id, account, tag, cid, op_return, tx_hex, change_vout, change_value)
        VALUES (${tx.getId()}, ${row.address}, ${row.seq}, ${post.id}, ${author}, ${row.tag}, ${row.cid}, ${row.op_return}, ${tx.toHex()},
          1, ${tx.outs[1]!.value.toString()})`
      yield* sql`UPDATE social_unsigned_stamps SET txid = ${tx.getId()} WHERE request_id = ${request.id} AND n = ${row.n}`
    }
    yield* sql`UPDATE social_signature_requests SET state = 'signed' WHERE id = ${request.id}`
    yield* takeEffect(post, now, request, author, { rows, matched })
  }).pipe(sql.withTransaction))

/**
 * The member's signed stamps for the action waiting on this post: every stamp of it, each exactly
 * the transaction built and signed by the post's key (anything else is refused and nothing is
 * sent). They are recorded in social_stamps and the action takes effect in one transaction, then
 * broadcast. The same signatures again (a retry after a lost answer) send the recorded bytes again.
 * `changed` tells the entity to schedule hosting again and drop its caches.
 */
export const submitSignatures = (s: SubmitSignatures) =>
  Effect.gen(function*() {
    const post = yield* loadPost(s.postId)
    const txs = yield* decodeItems(s)
    const awaiting = yield* namedRequest(s, post, "awaiting")
    if (Option.isNone(awaiting)) return yield* resendSigned(s, post, txs)
    const request = awaiting.value
    // The stamps are the signer's: the author's, or a comment's commenter's.
    const account = yield* accountOf(request.action === "comment" ? request.account ?? post.author : post.author)
    if (Date.now() >= Number(request.expires_at_ms)) return yield* refuse("signatures_expired", "the signature window of this action has ended")
    const rows = yield* unsignedRows(request.id)
    const matched = yield* matchSignatures(request, rows, txs)
    yield* recordSigned(post, request, rows, matched, account.address)
    const recorded = rows.map((r) => matched.get(r.n)!.toHex())
    // Recorded and in effect: a broadcast that fails now is the Post entity's to finish (its
    // FinishStamps timer sends these recorded bytes again), not the member's to resend.
    const sent = yield* Effect.either(broadcastAll(request.funding_hex, recorded))
    const after = yield* loadPost(post.id)
    return {
      reply: signedView(after, Option.getOrThrow(yield* requestById(request.id)), yield* unsignedRows(request.id), sent),
      changed: true, action: request.action, unsent: Either.isLeft(sent) ? sent.left : undefined
    }
  }).pipe(refuseOrRetry(asRefusal))

/**
 * The end of a signature window. An action still unsigned lapses: a publish ends `unsigned` (never
 * served); the charge of a publish or a renewal is refunded to the balance less the sponsor coins
 * it paid to the member's own address (they stay there, the member's key controls them). A
 * publish whose funding never happened has no request row: it lapses the same way.
 */
export const expireSignatures = (d: SignatureDeadline) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* Effect.gen(function*() {
      const [request] = yield* sql<{ state: string; action: Action; charged_base: string; funded_sats: string }>`SELECT state, action,
        charged_base::text AS charged_base, funded_sats::text AS funded_sats FROM social_signature_requests WHERE id = ${d.requestId} FOR UPDATE`
      if (request !== undefined && request.state !== "awaiting") return false
      if (request !== undefined) yield* sql`UPDATE social_signature_requests SET state = 'expired' WHERE id = ${d.requestId}`
      const action: Action = request?.action ?? "publish"
      const [post] = yield* sql<{ author: string; state: string }>`SELECT author, state FROM social_posts WHERE id = ${d.postId} FOR UPDATE`
      if (post === undefined) return false
      let charged = BigInt(request?.charged_base ?? "0")
      if (action === "publish") {
        if (post.state !== "awaiting_signature") return request !== undefined
        const [charge] = yield* sql<{ amount_base: string }>`SELECT amount_base::text AS amount_base FROM social_charges WHERE post_id = ${d.postId} AND reason = 'post'`
        charged = BigInt(charge?.amount_base ?? "0")
        yield* sql`UPDATE social_posts SET state = 'unsigned', timer_n = timer_n + 1 WHERE id = ${d.postId}`
      }
      const refund = charged - BigInt(request?.funded_sats ?? "0")
      if (refund > 0n) {
        yield* sql`UPDATE social_accounts SET balance_base = balance_base + ${refund.toString()} WHERE address = ${post.author}`
        yield* sql`INSERT INTO social_charges (account, amount_base, reason, post_id) VALUES (${post.author}, ${refund.toString()}, 'refund', ${d.postId})`
      }
      yield* Effect.logInfo(`post ${d.postId}: ${action} unsigned at the end of its window; refunded ${refund > 0n ? refund : 0n}`)
      return true
    }).pipe(sql.withTransaction)
  })

