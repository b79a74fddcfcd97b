// Member-signed stamps (docs/social.md, "Member-signed stamps"): an account linked by xpub only
// (no sealed seed) posts from its own wallet. Publishing and the author's later actions (T, R, M)
// do what they do for a service-held account — charge, manifest by CID, rows, the post's address
// derived from the xpub (…/1101'/{i}/0/0, all non-hardened) — except the signing: the Post entity
// funds one sponsor coin per stamp (one funding transaction), builds every stamp of the action as a
// PSBT (psbt.ts), and waits. The member signs in their wallet and sends them back; each signed
// transaction is checked to be exactly the one built and signed by the post's key, recorded in
// social_stamps, then broadcast, and only then does the action take effect (a post is hosted, a
// takedown unpins, a renewal extends, a metadata change shows). Unsigned past the window
// (SHARDLINE_SOCIAL_SIGNATURE_WINDOW_MS, a durable timer on the Post entity) the action lapses: a
// publish ends `unsigned` and its charge (a renewal's too) is refunded less the sponsor coins left
// on the member's address.
import { SqlClient } from "@effect/sql"
import { Transaction } from "bitcoinjs-lib"
import { Effect, Either, Option, Stream } from "effect"
import {
  type ChangeUnsigned, PostRefused, type PublishUnsigned, type SignatureDeadline, type SignedStamps, type SubmitSignatures, type UnsignedStamps
} from "../../../schemas/social/post.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import type { UtxoChainParams } from "../../chain/params.ts"
import { canonicalJson } from "../../crypto/canonicalJson.ts"
import { AppConfig } from "../../platform/Config.ts"
import { FeeSponsor } from "../../platform/ledger/FeeSponsor.ts"
import { memberSigns } from "../accounts/signing.ts"
import { postSteps, shortIdOf } from "../accounts/socialKeys.ts"
import { ContentStore } from "../content/ContentStore.ts"
import { checkPublish, checkText, findPost, type PostRow, requiredStamps } from "./Composer.ts"
import { isClosed, renewed } from "./hosting.ts"
import { encodeStamp, type StampTag } from "./opReturn.ts"
import { buildUnsignedStamp, outpointOf, postKeyFromXpub, signedTransactionOf, verifySignedStamp } from "./psbt.ts"

/** Indexes skipped at most when a short id is already taken (as Composer.ts). */
const SHORT_ID_ATTEMPTS = 8

/** Each stamp's own sponsor coin: its change back to the address stays above dust at the minimum fee rate. */
export const memberStampCoinSats = (params: UtxoChainParams): bigint => params.dustSats + 1_000n

export const signaturesPath = (postId: string) => `/api/social/posts/${postId}/signatures`

type Action = "publish" | "takedown" | "renew" | "metadata"

interface RequestRow {
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
}

interface UnsignedRow {
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

interface MemberAccount {
  readonly address: string
  readonly asset_id: string
  readonly xpub: string | null
  readonly xpub_path: string | null
  readonly balance_base: string
  readonly seed_enc: string | null
  readonly next_post_index: number
}

const refuse = (code: string, message: string) => new PostRefused({ code, message })

/** Anything but a refusal (database, ledger, sponsor) is reported as one, with its message. */
const asRefusal = (e: unknown): PostRefused =>
  e instanceof PostRefused ? e : new PostRefused({
    code: (e as { code?: string })?.code ?? "unavailable",
    message: (e as { message?: string })?.message ?? String(e)
  })

const requestColumns = `id::text AS id, post_id::text AS post_id, action, body, tags, charged_base::text AS charged_base, funding_hex,
  funded_sats::text AS funded_sats, state, expires_at_ms::text AS expires_at_ms`

const requestById = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql.unsafe<RequestRow>(`SELECT ${requestColumns} FROM social_signature_requests WHERE id = $1`, [id]), (rows) => Option.fromNullable(rows[0])))

const lastRequest = (postId: string, state?: RequestRow["state"]) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql.unsafe<RequestRow>(
        `SELECT ${requestColumns} FROM social_signature_requests WHERE post_id = $1 ${state === undefined ? "" : "AND state = $2"} ORDER BY created_at DESC LIMIT 1`,
        state === undefined ? [postId] : [postId, state]
      ),
      (rows) => Option.fromNullable(rows[0])
    ))

const unsignedRows = (requestId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<UnsignedRow>`SELECT n, address, derivation_path, seq, tag, cid, op_return, unsigned_hex, psbt, txid FROM social_unsigned_stamps
      WHERE request_id = ${requestId} ORDER BY n`)

const accountOf = (address: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.flatMap(
      sql<MemberAccount>`SELECT address, asset_id, xpub, xpub_path, balance_base::text AS balance_base, seed_enc, next_post_index
        FROM social_accounts WHERE address = ${address}`,
      ([row]) => (row === undefined ? Effect.fail(refuse("unknown_account", `no social account ${address.slice(0, 40)}`)) : Effect.succeed(row))
    ))

const loadPost = (postId: string) =>
  Effect.flatMap(findPost(postId), Option.match({ onNone: () => Effect.fail(refuse("not_found", `no post ${postId}`)), onSome: Effect.succeed }))

const viewOf = (post: PostRow, request: RequestRow, rows: ReadonlyArray<UnsignedRow>): UnsignedStamps => ({
  postId: post.id,
  shortId: post.short_id,
  state: post.state,
  action: request.action,
  requestId: request.id,
  metadataCid: request.action === "metadata" ? rows[0]?.cid ?? post.metadata_cid : post.metadata_cid,
  expiresAt: new Date(Number(request.expires_at_ms)).toISOString(),
  signaturesUrl: signaturesPath(post.id),
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
 * id already recorded (a redelivered message) is answered as it stands. `charge` runs in the same
 * transaction as the rows (a renewal's charge); `before` checks what must hold before funding.
 */
const openRequest = (
  post: PostRow,
  account: MemberAccount,
  requestId: string,
  messageKey: string,
  action: Action,
  needs: ReadonlyArray<{ readonly tag: StampTag; readonly cid: string }>,
  extra: { readonly chargedBase?: bigint; readonly body?: string; readonly tags?: ReadonlyArray<string> } = {}
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const ledger = yield* UtxoLedger
    const sponsor = yield* FeeSponsor
    const params = ledger.params
    const existing = yield* requestById(requestId)
    if (Option.isSome(existing)) return viewOf(post, existing.value, yield* unsignedRows(requestId))
    const pending = yield* lastRequest(post.id, "awaiting")
    if (Option.isSome(pending)) return yield* refuse("signature_pending", `the post's ${pending.value.action} waits for your signatures (GET /api/social/posts/${post.id}/unsigned)`)
    if (account.xpub === null) return yield* refuse("no_service_key", "this account has neither a service key nor a linked xpub")
    const key = postKeyFromXpub(account.xpub, postSteps(post.post_index), params)
    if (Either.isLeft(key) || key.right.address !== post.address) return yield* Effect.dieMessage(`post ${post.id}: its address is not the xpub's ${post.derivation_path}`)
    const [last] = yield* sql<{ seq: number | null }>`SELECT max(seq) AS seq FROM social_stamps WHERE address = ${post.address}`
    const seq0 = last?.seq === null || last?.seq === undefined ? 0 : last.seq + 1
    const each = memberStampCoinSats(params)
    const funding = yield* sponsor.fund(post.address, needs.length, each)
    const built = needs.map((need, n) => {
      const opReturn = encodeStamp({ tag: need.tag, cid: need.cid, assetId: account.asset_id, seq: seq0 + n })
      const psbt = buildUnsignedStamp(params, {
        coin: { txid: funding.txid, vout: n, value: each, prevTxHex: funding.hex },
        address: post.address, opReturn, pubkey: key.right.pubkey, fingerprint: key.right.fingerprint, relativePath: key.right.relativePath
      })
      return { need, n, opReturn, psbt: Either.getOrThrowWith(psbt, (m) => new Error(`member stamp: ${m}`)) }
    })
    const expiresAtMs = Date.now() + config.socialSignatureWindowMs
    yield* Effect.gen(function*() {
      if (extra.chargedBase !== undefined && extra.chargedBase > 0n && action === "renew") {
        const charged = yield* sql`UPDATE social_accounts SET balance_base = balance_base - ${extra.chargedBase.toString()}
          WHERE address = ${account.address} AND balance_base >= ${extra.chargedBase.toString()} RETURNING 1`
        if (charged.length === 0) return yield* refuse("insufficient_balance", `a renewal costs ${extra.chargedBase} base units`)
        yield* sql`INSERT INTO social_charges (account, amount_base, reason, post_id) VALUES (${account.address}, ${extra.chargedBase.toString()}, 'renewal', ${post.id})`
      }
      yield* sql`INSERT INTO social_signature_requests (id, message_key, post_id, action, body, tags, charged_base, funding_txid, funding_hex, funded_sats, state, expires_at_ms)
        VALUES (${requestId}, ${messageKey}, ${post.id}, ${action}, ${extra.body ?? null}, ${extra.tags === undefined ? null : JSON.stringify(extra.tags)}::jsonb,
          ${(extra.chargedBase ?? 0n).toString()}, ${funding.txid}, ${funding.hex}, ${(each * BigInt(needs.length)).toString()}, 'awaiting', ${expiresAtMs})`
      for (const b of built) {
        yield* sql`INSERT INTO social_unsigned_stamps (request_id, n, address, derivation_path, seq, tag, cid, op_return, unsigned_hex, psbt)
          VALUES (${requestId}, ${b.n}, ${post.address}, ${post.derivation_path}, ${seq0 + b.n}, ${b.need.tag}, ${b.need.cid}, ${b.opReturn},
            ${b.psbt.unsignedHex}, ${b.psbt.psbtBase64})`
      }
    }).pipe(sql.withTransaction)
    return viewOf(post, Option.getOrThrow(yield* requestById(requestId)), yield* unsignedRows(requestId))
  })

/**
 * Publish for a member-signed account: the rows as Composer.publish writes them (charge,
 * manifest, post), the address derived from the xpub, state `awaiting_signature`; then the
 * deadline (`deadline`, before any funding, so even a publish whose funding failed lapses and is
 * refunded), then the stamps C…, CHV1P, P built for signing. A redelivered message finds the post.
 */
export const publishUnsigned = (p: PublishUnsigned, deadline: (requestId: string, dueAtMs: number) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const store = yield* ContentStore
    const ledger = yield* UtxoLedger
    const messageKey = `publish-unsigned:${p.postId}`
    let post = yield* findPost(p.postId)
    if (Option.isNone(post)) {
      yield* checkPublish(p)
      yield* Effect.gen(function*() {
        const [account] = yield* sql<MemberAccount>`SELECT address, asset_id, xpub, xpub_path, balance_base::text AS balance_base, seed_enc, next_post_index
          FROM social_accounts WHERE address = ${p.author} FOR UPDATE`
        if (account === undefined) return yield* refuse("unknown_account", `no social account ${p.author.slice(0, 40)}`)
        if (!memberSigns(account) || account.xpub === null) return yield* refuse("no_service_key", "this account has no linked xpub to derive its post addresses from")
        const price = config.socialPostPriceBase
        if (BigInt(account.balance_base) < price) {
          return yield* refuse("insufficient_balance", `a post costs ${price} base units; the balance is ${account.balance_base}`)
        }
        const accountPath = account.xpub_path ?? `m/44'/${ledger.params.coinType}'/1101'`
        const derive = (i: number) => Either.getOrThrowWith(postKeyFromXpub(account.xpub!, postSteps(i), ledger.params), (m) => new Error(m))
        let index = account.next_post_index
        let key = derive(index)
        for (let i = 0; i < SHORT_ID_ATTEMPTS && (yield* sql`SELECT 1 FROM social_posts WHERE short_id = ${shortIdOf(key.address)}`).length > 0; i++) {
          index += 1
          key = derive(index)
        }
        const path = `${accountPath}/${postSteps(index).join("/")}`
        const createdAt = new Date()
        const manifest = canonicalJson({
          version: 1, kind: p.kind, body: p.body, tags: [...p.tags], media: [...p.mediaCids], author: p.author,
          address: key.address, derivationPath: path, createdAt: createdAt.toISOString()
        })
        const stored = yield* store.put(Stream.succeed(Buffer.from(manifest, "utf8")), "application/json")
        yield* sql`UPDATE social_accounts SET balance_base = balance_base - ${price.toString()}, next_post_index = ${index + 1} WHERE address = ${p.author}`
        yield* sql`INSERT INTO social_charges (account, amount_base, reason, post_id) VALUES (${p.author}, ${price.toString()}, 'post', ${p.postId})`
        // The paid period starts when the stamps are signed (submitSignatures); until then nothing is served.
        yield* sql`INSERT INTO social_posts (id, short_id, author, post_index, address, derivation_path, kind, body, tags, media_cids, metadata_cid, state, paid_until_ms, created_at)
          VALUES (${p.postId}, ${shortIdOf(key.address)}, ${p.author}, ${index}, ${key.address}, ${path}, ${p.kind}, ${p.body},
            ${JSON.stringify(p.tags)}::jsonb, ${JSON.stringify(p.mediaCids)}::jsonb, ${stored.cid}, 'awaiting_signature', ${createdAt.getTime()}, ${createdAt})`
        for (const cid of new Set([stored.cid, ...p.mediaCids])) yield* sql`INSERT INTO social_post_cids (post_id, cid) VALUES (${p.postId}, ${cid})`
      }).pipe(sql.withTransaction)
      post = yield* findPost(p.postId)
    }
    const row = Option.getOrThrow(post)
    if (row.state !== "awaiting_signature") {
      const request = yield* requestById(row.id)
      if (Option.isSome(request)) return viewOf(row, request.value, yield* unsignedRows(row.id))
      return yield* refuse("post_closed", `the post is ${row.state.replace("_", " ")}`)
    }
    yield* deadline(row.id, new Date(row.created_at).getTime() + config.socialSignatureWindowMs)
    const account = yield* accountOf(row.author)
    return yield* openRequest(row, account, row.id, messageKey, "publish", requiredStamps(row))
  }).pipe(Effect.mapError(asRefusal))

/** T, R or M for a member-signed post: charged (R) and built for signing; takes effect once signed. */
export const changeUnsigned = (c: ChangeUnsigned, deadline: (requestId: string, dueAtMs: number) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const store = yield* ContentStore
    const post = yield* loadPost(c.postId)
    const account = yield* accountOf(post.author)
    const messageKey = `change-unsigned:${c.postId}:${c.requestId}`
    const existing = yield* requestById(c.requestId)
    if (Option.isSome(existing)) return viewOf(post, existing.value, yield* unsignedRows(c.requestId))
    if (post.state === "awaiting_signature") return yield* refuse("signature_pending", "the post's publish waits for your signatures")
    if (post.state === "unsigned" || isClosed(post.state)) return yield* refuse("post_closed", `the post is ${post.state.replace("_", " ")}; it cannot change any more`)
    let view: UnsignedStamps
    if (c.action === "takedown") {
      view = yield* openRequest(post, account, c.requestId, messageKey, "takedown", [{ tag: "T", cid: post.metadata_cid }])
    } else if (c.action === "renew") {
      const price = config.socialPostPriceBase
      if (BigInt(account.balance_base) < price) return yield* refuse("insufficient_balance", `a renewal costs ${price} base units`)
      view = yield* openRequest(post, account, c.requestId, messageKey, "renew", [{ tag: "R", cid: post.metadata_cid }], { chargedBase: price })
    } else {
      const body = c.body ?? post.body
      const tags = c.tags ?? post.tags
      yield* checkText(body, tags)
      const [latest] = yield* sql<{ cid: string }>`SELECT cid FROM social_stamps WHERE post_id = ${post.id} AND tag IN ('CHV1P', 'M') ORDER BY seq DESC LIMIT 1`
      const manifest = canonicalJson({
        version: 1, kind: post.kind, body, tags: [...tags], media: [...post.media_cids], author: post.author, address: post.address,
        derivationPath: post.derivation_path, createdAt: new Date(post.created_at).toISOString(), previous: latest?.cid ?? post.metadata_cid,
        updatedAt: new Date().toISOString()
      })
      const stored = yield* store.put(Stream.succeed(Buffer.from(manifest, "utf8")), "application/json")
      yield* sql`INSERT INTO social_post_cids (post_id, cid) VALUES (${post.id}, ${stored.cid}) ON CONFLICT DO NOTHING`
      view = yield* openRequest(post, account, c.requestId, messageKey, "metadata", [{ tag: "M", cid: stored.cid }], { body, tags })
    }
    yield* deadline(c.requestId, Date.parse(view.expiresAt))
    return view
  }).pipe(Effect.mapError(asRefusal))

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

const signedView = (post: PostRow, request: RequestRow, rows: ReadonlyArray<UnsignedRow>): SignedStamps => {
  const proof = rows.find((r) => r.tag === "CHV1P") ?? rows.at(-1)
  return {
    postId: post.id, shortId: post.short_id, state: post.state, action: request.action,
    metadataCid: request.action === "metadata" ? rows[0]?.cid ?? post.metadata_cid : post.metadata_cid,
    txHash: proof?.txid ?? null,
    stamps: rows.map((r) => ({ tag: r.tag, cid: r.cid, txid: r.txid ?? "", opReturn: r.op_return }))
  }
}

/**
 * The member's signed stamps for the action waiting on this post: every stamp of it, each exactly
 * the transaction built and signed by the post's key (anything else is refused and nothing is
 * sent). They are recorded in social_stamps and the action takes effect in one transaction, then
 * broadcast. The same signatures again (a retry after a lost answer) send the recorded bytes again.
 * `effect` tells the entity what changed (schedule hosting, drop caches).
 */
export const submitSignatures = (s: SubmitSignatures) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const ledger = yield* UtxoLedger
    const params = ledger.params
    const post = yield* loadPost(s.postId)
    const account = yield* accountOf(post.author)
    const txs: Array<Transaction> = []
    for (const [i, item] of s.items.entries()) {
      const tx = signedTransactionOf(item)
      if (Either.isLeft(tx)) return yield* refuse("invalid_parameter", `items[${i}]: ${tx.left}`)
      txs.push(tx.right)
    }
    const awaiting = yield* lastRequest(post.id, "awaiting")
    if (Option.isNone(awaiting)) {
      // A retry of signatures already taken: the recorded bytes go out again.
      const signed = yield* lastRequest(post.id, "signed")
      if (Option.isSome(signed)) {
        const rows = yield* unsignedRows(signed.value.id)
        const ids = new Set(rows.map((r) => r.txid))
        if (txs.length > 0 && txs.every((t) => ids.has(t.getId()))) {
          const recorded = yield* sql<{ tx_hex: string }>`SELECT tx_hex FROM social_stamps WHERE txid IN ${sql.in(rows.map((r) => r.txid!))} ORDER BY seq`
          yield* broadcastAll(signed.value.funding_hex, recorded.map((r) => r.tx_hex))
          return { reply: signedView(post, signed.value, rows), changed: false, action: signed.value.action }
        }
      }
      return yield* refuse("nothing_to_sign", "no action of this post waits for signatures")
    }
    const request = awaiting.value
    if (Date.now() >= Number(request.expires_at_ms)) return yield* refuse("signatures_expired", "the signature window of this action has ended")
    const rows = yield* unsignedRows(request.id)
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
    yield* Effect.gen(function*() {
      const [locked] = yield* sql<{ state: string }>`SELECT state FROM social_signature_requests WHERE id = ${request.id} FOR UPDATE`
      if (locked?.state !== "awaiting") return yield* refuse("nothing_to_sign", "this action is no longer waiting for signatures")
      const [now] = yield* sql<{ state: PostRow["state"]; paid_until_ms: string }>`SELECT state, paid_until_ms::text AS paid_until_ms FROM social_posts WHERE id = ${post.id} FOR UPDATE`
      if (now === undefined || isClosed(now.state) || now.state === "unsigned") return yield* refuse("post_closed", `the post is ${now?.state ?? "gone"}`)
      for (const row of rows) {
        const tx = matched.get(row.n)!
        yield* sql`INSERT INTO social_stamps (txid, address, seq, post_id, account, tag, cid, op_return, tx_hex, change_vout, change_value)
          VALUES (${tx.getId()}, ${row.address}, ${row.seq}, ${post.id}, ${account.address}, ${row.tag}, ${row.cid}, ${row.op_return}, ${tx.toHex()},
            1, ${tx.outs[1]!.value.toString()})`
        yield* sql`UPDATE social_unsigned_stamps SET txid = ${tx.getId()} WHERE request_id = ${request.id} AND n = ${row.n}`
      }
      yield* sql`UPDATE social_signature_requests SET state = 'signed' WHERE id = ${request.id}`
      const nowMs = Date.now()
      switch (request.action) {
        case "publish":
          yield* sql`UPDATE social_posts SET state = 'hosted', paid_until_ms = ${nowMs + config.socialHostingPeriodMs} WHERE id = ${post.id}`
          break
        case "renew": {
          const next = renewed({ state: now.state, paidUntilMs: Number(now.paid_until_ms) }, config.socialHostingPeriodMs, nowMs)
          yield* sql`UPDATE social_posts SET state = 'hosted', paid_until_ms = ${next.paidUntilMs} WHERE id = ${post.id}`
          break
        }
        case "takedown":
          yield* sql`UPDATE social_posts SET state = 'taken_down', timer_n = timer_n + 1 WHERE id = ${post.id}`
          break
        case "metadata":
          yield* sql`UPDATE social_posts SET body = ${request.body ?? post.body}, tags = ${JSON.stringify(request.tags ?? post.tags)}::jsonb WHERE id = ${post.id}`
          break
      }
    }).pipe(sql.withTransaction)
    const recorded = rows.map((r) => matched.get(r.n)!.toHex())
    yield* broadcastAll(request.funding_hex, recorded)
    const after = yield* loadPost(post.id)
    return { reply: signedView(after, Option.getOrThrow(yield* requestById(request.id)), yield* unsignedRows(request.id)), changed: true, action: request.action }
  }).pipe(Effect.mapError(asRefusal))

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

/** What the Post entity lends the member-signed handlers: its own timer and what follows a change. */
export interface MemberSignedContext {
  readonly deadline: (requestId: string, dueAtMs: number) => Effect.Effect<void>
  /** After signatures took effect: hosting scheduled again (publish, renew), caches dropped. */
  readonly afterChange: (post: PostRow, action: Action) => Effect.Effect<void, unknown, never>
}

/** The Post entity's member-signed messages (schemas/social/post.ts). */
export const memberSignedHandlers = (ctx: MemberSignedContext) => ({
  PublishUnsigned: ({ payload }: { readonly payload: PublishUnsigned }) => publishUnsigned(payload, ctx.deadline),
  ChangeUnsigned: ({ payload }: { readonly payload: ChangeUnsigned }) => changeUnsigned(payload, ctx.deadline),
  SubmitSignatures: ({ payload }: { readonly payload: SubmitSignatures }) =>
    Effect.gen(function*() {
      const done = yield* submitSignatures(payload)
      if (done.changed) yield* ctx.afterChange(yield* loadPost(payload.postId), done.action)
      return done.reply
    }).pipe(Effect.mapError(asRefusal)),
  SignatureDeadline: ({ payload }: { readonly payload: SignatureDeadline }) =>
    Effect.gen(function*() {
      if (yield* expireSignatures(payload)) yield* Effect.flatMap(findPost(payload.postId), Option.match({
        onNone: () => Effect.void,
        onSome: (post) => ctx.afterChange(post, "takedown").pipe(Effect.ignore)
      }))
    }).pipe(Effect.orDie)
})
