// Stamps the service owes a post once the action that calls for them has taken effect (docs/social.md,
// "Stamps that could not go out"): T (author takedown), D (moderator pull), R (renewal), M (metadata
// update) and X then XM (a comment's body and manifest, stamped from the commenter's own comment
// address). Each is written as a social_owed_stamps row in the transaction of the action's effect,
// then made; the stamp's own recording transaction marks the row paid (Stamper.ts, `owedId`), so a
// stamp is made at most once per owed row, and the Post entity's FinishStamps timer (StampCompletion.ts) makes every row still
// unpaid until none is left. A stamp that was made but whose broadcast was lost is not made again:
// it is sent again with its recorded bytes (StampCompletion.resendLost).
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { PostRefused } from "../../../schemas/social/post.ts"
import { accountKey, type AccountRow, findAccount } from "../accounts/Accounts.ts"
import { findPost, stampPost } from "./Composer.ts"
import type { StampTag } from "./opReturn.ts"
import { stamp } from "./Stamper.ts"

export { owe, owedBy } from "./owedRows.ts"

export interface OwedRow {
  readonly id: string
  readonly post_id: string
  readonly tag: StampTag
  readonly cid: string
  readonly comment_id: string | null
  readonly txid: string | null
}

export interface PaidStamp {
  readonly txid: string
  readonly opReturn: string
}

/** The post index a comment address was derived at: the first of the path's last three steps ({i}/0/0). Pure. */
export const indexOfPath = (path: string): number => Number(path.split("/").at(-3))

const paidStamp = (txid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ op_return: string }>`SELECT op_return FROM social_stamps WHERE txid = ${txid}`,
      (rows) => (rows[0] === undefined ? undefined : { txid, opReturn: rows[0].op_return })))

const accountOf = (address: string) =>
  Effect.flatMap(findAccount(address), Option.match({
    onNone: () => Effect.fail(new PostRefused({ code: "unknown_account", message: `no social account ${address.slice(0, 40)}` })),
    onSome: (a: AccountRow) => Effect.succeed(a)
  }))

const owedRow = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<OwedRow>`SELECT id::text AS id, post_id::text AS post_id, tag, cid, comment_id::text AS comment_id, txid
      FROM social_owed_stamps WHERE id = ${id}`, (rows) => rows[0]))

/**
 * Makes one owed stamp (none if it is already paid): a comment's (X, XM) from the commenter's
 * comment address, the others as the post's stamps (its own address; a member-signed post's D
 * from the moderation address). With the row, for what follows it.
 */
const payOne = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const row = yield* owedRow(id)
    if (row === undefined) return { row, paid: undefined }
    if (row.txid !== null) return { row, paid: yield* paidStamp(row.txid) }
    const post = Option.getOrThrow(yield* findPost(row.post_id))
    const made = row.comment_id !== null
      ? yield* Effect.gen(function*() {
        const [comment] = yield* sql<{ author: string; address: string; derivation_path: string }>`SELECT author, address, derivation_path
          FROM social_comments WHERE id = ${row.comment_id}`
        const commenter = yield* accountOf(comment!.author)
        const key = yield* accountKey(commenter, indexOfPath(comment!.derivation_path))
        return yield* stamp({
          address: comment!.address, privateKey: key.privateKey, account: commenter.address, assetId: commenter.asset_id,
          postId: post.id, tag: row.tag, cid: row.cid, owedId: row.id
        })
      })
      : yield* stampPost(post, yield* accountOf(post.author), row.tag, row.cid, row.id)
    return { row, paid: { txid: made.txid, opReturn: made.opReturn } satisfies PaidStamp }
  }).pipe(Effect.catchIf(
    // Paid by an earlier attempt between our read and the stamp's own check.
    (e) => (e as { message?: string })?.message === "already_paid",
    () => Effect.flatMap(owedRow(id), (row) => Effect.map(paidStamp(row!.txid!), (paid) => ({ row, paid })))
  ))

/**
 * Makes one owed stamp (none if it is already paid). A comment's X is followed by its XM: the
 * comment's later owed stamps still unpaid are made now too, in order, whether the X was made now
 * or before (a redelivered Change whose node died between the two).
 */
export const payOwed = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { row, paid } = yield* payOne(id)
    if (row?.comment_id != null) {
      const rest = yield* sql<{ id: string }>`SELECT id::text AS id FROM social_owed_stamps
        WHERE comment_id = ${row.comment_id} AND id > ${row.id} AND txid IS NULL ORDER BY social_owed_stamps.id`
      for (const r of rest) yield* payOne(r.id)
    }
    return paid
  })

/** Makes every owed stamp of the post still unpaid, oldest first; how many were made. */
export const payAllOwed = (postId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ id: string }>`SELECT id::text AS id FROM social_owed_stamps WHERE post_id = ${postId} AND txid IS NULL ORDER BY social_owed_stamps.id`
    for (const row of rows) yield* payOwed(row.id)
    return rows.length
  })

/** The latest owed stamp of a tag on the post (paid or not): what a repeated T or D answers. */
export const lastOwed = (postId: string, tag: StampTag) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ id: string }>`SELECT id::text AS id FROM social_owed_stamps WHERE post_id = ${postId} AND tag = ${tag} ORDER BY social_owed_stamps.id DESC LIMIT 1`,
      (rows) => Option.fromNullable(rows[0]?.id)))
