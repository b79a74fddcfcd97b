// Signature requests of member-signed stamps (docs/social.md, "Member-signed stamps"): one author
// action waiting for the member's signatures, its rows and the view the member reads, and how one
// is opened: one sponsor funding with a coin per stamp, a PSBT per stamp (psbt.ts), recorded.
import { SqlClient } from "@effect/sql"
import { Effect, Either, Option } from "effect"
import { PostRefused, type UnsignedStamps } from "../../../schemas/social/post.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import type { UtxoChainParams } from "../../chain/params.ts"
import { SocialConfig } from "../SocialConfig.ts"
import { FeeSponsor } from "../../platform/ledger/FeeSponsor.ts"
import { postSteps } from "../accounts/socialKeys.ts"
import { findPost, type PostRow } from "./Composer.ts"
import { encodeStamp, type StampTag } from "./opReturn.ts"
import { buildUnsignedStamp, postKeyFromXpub } from "./psbt.ts"

/** Each stamp's own sponsor coin: its change back to the address stays above dust at the minimum fee rate. */
export const memberStampCoinSats = (params: UtxoChainParams): bigint => params.dustSats + 1_000n

export const signaturesPath = (postId: string) => `/api/social/posts/${postId}/signatures`
/** Where a member-signed comment's signatures go (the request id is the comment id). */
export const commentSignaturesPath = (postId: string, commentId: string) => `/api/social/posts/${postId}/comments/${commentId}/signatures`

export type Action = "publish" | "takedown" | "renew" | "metadata" | "comment"

export interface RequestRow {
  readonly id: string
  readonly post_id: string
  readonly action: Action
  readonly body: string | null
  readonly tags: ReadonlyArray<string> | null
  readonly charged_base: string
  readonly funding_hex: string
  readonly funded_sats: string
  readonly state: "awaiting" | "signed" | "expired"
  readonly expires_at_ms: string
  readonly account: string | null
  readonly body_cid: string | null
}

export interface UnsignedRow {
  readonly n: number
  readonly address: string
  readonly derivation_path: string
  readonly seq: number
  readonly tag: StampTag
  readonly cid: string
  readonly op_return: string
  readonly unsigned_hex: string
  readonly psbt: string
  readonly txid: string | null
}

export interface MemberAccount {
  readonly address: string
  readonly asset_id: string
  readonly xpub: string | null
  readonly xpub_path: string | null
  readonly balance_base: string
  readonly seed_enc: string | null
  readonly next_post_index: number
}

export const refuse = (code: string, message: string) => new PostRefused({ code, message })

/** Anything but a refusal (database, ledger, sponsor) is reported as one, with its message. */
export const asRefusal = (e: unknown): PostRefused =>
  e instanceof PostRefused ? e : new PostRefused({
    code: (e as { code?: string })?.code ?? "unavailable",
    message: (e as { message?: string })?.message ?? String(e)
  })

const requestColumns = `id::text AS id, post_id::text AS post_id, action, body, tags, charged_base::text AS charged_base, funding_hex,
  funded_sats::text AS funded_sats, state, expires_at_ms::text AS expires_at_ms, account, body_cid`

export const requestById = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql.unsafe<RequestRow>(`SELECT ${requestColumns} FROM social_signature_requests WHERE id = $1`, [id]), (rows) => Option.fromNullable(rows[0])))

/** The author's latest action of the post (a member-signed comment is the commenter's, never this). */
export const lastRequest = (postId: string, state?: RequestRow["state"]) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql.unsafe<RequestRow>(
        `SELECT ${requestColumns} FROM social_signature_requests WHERE post_id = $1 AND action <> 'comment' ${state === undefined ? "" : "AND state = $2"}
          ORDER BY created_at DESC LIMIT 1`,
        state === undefined ? [postId] : [postId, state]
      ),
      (rows) => Option.fromNullable(rows[0])
    ))

export const unsignedRows = (requestId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<UnsignedRow>`SELECT n, address, derivation_path, seq, tag, cid, op_return, unsigned_hex, psbt, txid FROM social_unsigned_stamps
      WHERE request_id = ${requestId} ORDER BY n`)

export const accountOf = (address: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql<MemberAccount>`SELECT address, asset_id, xpub, xpub_path, balance_base::text AS balance_base, seed_enc, next_post_index
        FROM social_accounts WHERE address = ${address}`,
      ([row]) => (row === undefined ? Effect.fail(refuse("unknown_account", `no social account ${address.slice(0, 40)}`)) : Effect.succeed(row))
    ))

export const loadPost = (postId: string) =>
  Effect.flatMap(findPost(postId), Option.match({ onNone: () => Effect.fail(refuse("not_found", `no post ${postId}`)), onSome: Effect.succeed }))

export const viewOf = (post: PostRow, request: RequestRow, rows: ReadonlyArray<UnsignedRow>): UnsignedStamps => ({
  postId: post.id,
  shortId: post.short_id,
  state: post.state,
  action: request.action,
  requestId: request.id,
  metadataCid: request.action === "metadata" ? rows[0]?.cid ?? post.metadata_cid : post.metadata_cid,
  expiresAt: new Date(Number(request.expires_at_ms)).toISOString(),
  signaturesUrl: request.action === "comment" ? commentSignaturesPath(post.id, request.id) : signaturesPath(post.id),
  stamps: rows.map((r) => ({ tag: r.tag, cid: r.cid, opReturn: r.op_return, address: r.address, derivationPath: r.derivation_path, psbt: r.psbt }))
})

/** The action waiting for the member's signatures on this post, if any (what GET …/unsigned shows). */
export const awaitingSignatures = (post: PostRow) =>
  Effect.gen(function*() {
    const request = yield* lastRequest(post.id, "awaiting")
    if (Option.isNone(request)) return Option.none<UnsignedStamps>()
    return Option.some(viewOf(post, request.value, yield* unsignedRows(request.value.id)))
  })

/**
 * Funds and builds the stamps of one action and records them: one sponsor transaction paying a
 * coin per stamp to the post's address, a PSBT per stamp spending its own coin (so none depends on
 * another's txid), sequence numbers following the address's recorded stamps. A request with this
 * id already recorded (a redelivered message) is answered as it stands. A renewal's charge
 * (`extra.chargedBase`) commits with the rows; a metadata change's new body and tags wait in them.
 */
export const openRequest = (
  post: PostRow,
  account: MemberAccount,
  requestId: string,
  messageKey: string,
  action: Action,
  needs: ReadonlyArray<{ readonly tag: StampTag; readonly cid: string }>,
  extra: {
    readonly chargedBase?: bigint
    readonly body?: string
    readonly tags?: ReadonlyArray<string>
    /** A comment's: the commenter's comment address (post index `index` of their xpub), its text's CID. */
    readonly comment?: { readonly index: number; readonly address: string; readonly derivationPath: string; readonly bodyCid: string }
  } = {}
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* SocialConfig
    const ledger = yield* UtxoLedger
    const sponsor = yield* FeeSponsor
    const params = ledger.params
    const existing = yield* requestById(requestId)
    if (Option.isSome(existing)) return viewOf(post, existing.value, yield* unsignedRows(requestId))
    const pending = action === "comment" ? Option.none<RequestRow>() : yield* lastRequest(post.id, "awaiting")
    if (Option.isSome(pending)) return yield* refuse("signature_pending", `the post's ${pending.value.action} waits for your signatures (GET /api/social/posts/${post.id}/unsigned)`)
    if (account.xpub === null) return yield* refuse("no_service_key", "this account has neither a service key nor a linked xpub")
    // The address that signs: the post's own, or a comment's (the commenter's next index).
    const target = extra.comment ?? { index: post.post_index, address: post.address, derivationPath: post.derivation_path }
    const key = postKeyFromXpub(account.xpub, postSteps(target.index), params)
    if (Either.isLeft(key) || key.right.address !== target.address) return yield* Effect.dieMessage(`post ${post.id}: ${target.address} is not the xpub's ${target.derivationPath}`)
    const [last] = yield* sql<{ seq: number | null }>`SELECT max(seq) AS seq FROM social_stamps WHERE address = ${target.address}`
    const seq0 = last?.seq === null || last?.seq === undefined ? 0 : last.seq + 1
    const each = memberStampCoinSats(params)
    const funding = yield* sponsor.fund(target.address, needs.length, each)
    const built = needs.map((need, n) => {
      const opReturn = encodeStamp({ tag: need.tag, cid: need.cid, assetId: account.asset_id, seq: seq0 + n })
      const psbt = buildUnsignedStamp(params, {
        coin: { txid: funding.txid, vout: n, value: each, prevTxHex: funding.hex },
        address: target.address, opReturn, pubkey: key.right.pubkey, fingerprint: key.right.fingerprint, relativePath: key.right.relativePath
      })
      return { need, n, opReturn, psbt: Either.getOrThrowWith(psbt, (m) => new Error(`member stamp: ${m}`)) }
    })
    const expiresAtMs = Date.now() + config.socialSignatureWindowMs
    yield* Effect.gen(function*() {
      if (extra.chargedBase !== undefined && extra.chargedBase > 0n && (action === "renew" || action === "comment")) {
        const charged = yield* sql`UPDATE social_accounts SET balance_base = balance_base - ${extra.chargedBase.toString()}
          WHERE address = ${account.address} AND balance_base >= ${extra.chargedBase.toString()} RETURNING 1`
        if (charged.length === 0) return yield* refuse("insufficient_balance", `a ${action === "renew" ? "renewal" : "comment"} costs ${extra.chargedBase} base units`)
        yield* sql`INSERT INTO social_charges (account, amount_base, reason, post_id) VALUES (${account.address}, ${extra.chargedBase.toString()}, ${action === "renew" ? "renewal" : "comment"}, ${post.id})`
      }
      yield* sql`INSERT INTO social_signature_requests (id, message_key, post_id, action, body, tags, charged_base, funding_txid, funding_hex, funded_sats, state, expires_at_ms, account, body_cid)
        VALUES (${requestId}, ${messageKey}, ${post.id}, ${action}, ${extra.body ?? null}, ${extra.tags === undefined ? null : JSON.stringify(extra.tags)}::jsonb,
          ${(extra.chargedBase ?? 0n).toString()}, ${funding.txid}, ${funding.hex}, ${(each * BigInt(needs.length)).toString()}, 'awaiting', ${expiresAtMs},
          ${account.address}, ${extra.comment?.bodyCid ?? null})`
      for (const b of built) {
        yield* sql`INSERT INTO social_unsigned_stamps (request_id, n, address, derivation_path, seq, tag, cid, op_return, unsigned_hex, psbt)
          VALUES (${requestId}, ${b.n}, ${target.address}, ${target.derivationPath}, ${seq0 + b.n}, ${b.need.tag}, ${b.need.cid}, ${b.opReturn},
            ${b.psbt.unsignedHex}, ${b.psbt.psbtBase64})`
      }
    }).pipe(sql.withTransaction)
    return viewOf(post, Option.getOrThrow(yield* requestById(requestId)), yield* unsignedRows(requestId))
  })

