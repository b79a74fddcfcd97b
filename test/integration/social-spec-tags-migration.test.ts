// Stamps recorded before the spec's tag readings (migration 0040, docs/social.md "Tags and
// suffixes") still read back: a text-only post published without a body C owes none and reads as
// done; a comment whose X (carrying its manifest) is on the chain keeps it; a comment whose X was
// still owed is owed the new way (X the body, then XM the manifest).
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { migrations } from "../../src/migrations.ts"
import { migrate } from "../../src/platform/database/Database.ts"
import type { Migrations } from "../../src/platform/database/Migrations.ts"
import { postColumns, type PostRow, receiptOf, requiredStamps, type StampRow } from "../../src/social/posts/Composer.ts"

const migrateWith = (db: TestDatabase, list: Migrations) =>
  Effect.runPromise(Effect.scoped(migrate(list).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(db.url), maxConnections: 3, transformJson: false }))
  )))
const before0040 = Object.fromEntries(Object.entries(migrations).filter(([key]) => Number(key.split("_")[0]) < 40))

const cid = (c: string) => `bafkrei${c.repeat(52)}`
const author = "TauthorAddress000000000000000000000"
const commenter = "TcommenterAddress00000000000000000"
const post = "00000000-0000-4000-8000-000000000001"
const paidComment = "00000000-0000-4000-8000-000000000002"
const owedComment = "00000000-0000-4000-8000-000000000003"

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase("spectags")
  await migrateWith(db, before0040)
  const q = db.query
  await q("INSERT INTO social_accounts (address, asset_id) VALUES ($1, 'AAAAAA'), ($2, 'BBBBBB')", [author, commenter])
  // A text-only post as published before 0040: CHV1P and P, no C.
  await q(`INSERT INTO social_posts (id, short_id, author, post_index, address, derivation_path, kind, body, tags, media_cids, metadata_cid, state, paid_until_ms)
    VALUES ($1, 'abcdef', $2, 0, 'TpostAddress', 'm/0', 'text', 'words', '[]', '[]', $3, 'hosted', 0)`, [post, author, cid("m")])
  await q(`INSERT INTO social_stamps (txid, address, seq, post_id, account, tag, cid, op_return, tx_hex) VALUES
    ('t1', 'TpostAddress', 0, $1, $2, 'CHV1P', $3, 'CHV1P|x|AAAAAA.0', ''), ('t2', 'TpostAddress', 1, $1, $2, 'P', $3, 'P|x|AAAAAA.1', '')`, [post, author, cid("m")])
  // A comment whose X (its manifest) is on the chain, and one whose X was still owed.
  await q(`INSERT INTO social_comments (id, post_id, author, body_cid, manifest_cid, address, derivation_path, txid) VALUES
    ($1, $3, $4, $5, $6, 'Tc1', 'm/1', 't3'), ($2, $3, $4, $7, $8, 'Tc2', 'm/2', NULL)`, [paidComment, owedComment, post, commenter, cid("b"), cid("c"), cid("d"), cid("e")])
  await q(`INSERT INTO social_stamps (txid, address, seq, post_id, account, tag, cid, op_return, tx_hex) VALUES ('t3', 'Tc1', 0, $1, $2, 'X', $3, 'X|x|BBBBBB.0', '')`, [post, commenter, cid("c")])
  await q(`INSERT INTO social_owed_stamps (post_id, tag, cid, comment_id, request_id, txid) VALUES
    ($1, 'X', $2, $3::uuid, $3::text, 't3'), ($1, 'X', $4, $5::uuid, $5::text, NULL)`, [post, cid("c"), paidComment, cid("e"), owedComment])
  expect((await migrateWith(db, migrations)).map(([id]) => id)).toContain(40)
}, 60_000)
afterAll(async () => {
  await db?.drop()
})

describe("stamps recorded before the spec's tag readings", () => {
  it("a text-only post without a body C owes none and reads back done", async () => {
    const [row] = await db.query<PostRow>(`SELECT ${postColumns} FROM social_posts WHERE id = $1`, [post])
    expect(row!.body_cid).toBeNull()
    expect(requiredStamps(row!).map((s) => s.tag)).toEqual(["CHV1P", "P"])
    const stamps = await db.query<StampRow>("SELECT txid, tag, cid, op_return, seq FROM social_stamps WHERE post_id = $1 ORDER BY seq", [post])
    expect(receiptOf(row!, stamps)).toMatchObject({ stamping: "done", txHash: "t1" })
  })

  it("a comment's X already made keeps its manifest CID; one still owed is owed as X (the body) then XM (the manifest)", async () => {
    const owed = await db.query<{ tag: string; cid: string; comment_id: string; request_id: string; txid: string | null }>(
      "SELECT tag, cid, comment_id::text AS comment_id, request_id, txid FROM social_owed_stamps ORDER BY id")
    expect(owed).toEqual([
      { tag: "X", cid: cid("c"), comment_id: paidComment, request_id: paidComment, txid: "t3" },
      { tag: "X", cid: cid("d"), comment_id: owedComment, request_id: owedComment, txid: null },
      { tag: "XM", cid: cid("e"), comment_id: owedComment, request_id: `${owedComment}/manifest`, txid: null }
    ])
    expect(await db.query("SELECT tag, cid FROM social_stamps WHERE txid = 't3'")).toEqual([{ tag: "X", cid: cid("c") }])
  })
})
