// social account create [--handle NAME] [--json]                          → {address, assetId, handle, wif}   (devnet)
// social post --account ADDR --body TEXT [--kind story] [--tags a,b] [--media FILE]… [--xprv-file FILE] [--json]
//                                                                        → {postId, shortId, metadataCid, mediaCids, txHash, opReturn}
//   (an xpub-only account: --xprv-file signs its stamps here, → {postId, shortId, state, action, metadataCid, txHash, stamps})
// social takedown --post ID [--json] / social moderate --post ID --reason TEXT [--json] → {postId, state, paidUntil, txid, opReturn}
//   (moderate also → blockedCids: the pulled post's CIDs, served and postable under no post until lifted)
// social moderate --lift CID [--reason TEXT] [--json]                     → {cid, blocked: false, lifted: [{postId, liftedAt}]}
// social timeline --address ADDR [--xpub XPUB] [--json]                   → the author's stamps, rebuilt from the chain
// social live add --stream ID --wallet ADDR --title TEXT [--json]         → {streamId, wallet, title, embed}
// social live stream --stream ID (--playlist CID | --offline) [--json]    → {streamId, playlistCid, embed, playlist}
//   (the ingest sets the channel's current HLS playlist, already uploaded; docs/social.md "Live channels")
// social link-token --account ADDR [--json]                               → {token, url, expiresAt}  (the wallet-link QR)
// The CLI does what the composer does: media go into the content store from here (streamed from
// the file), then the Post entity, in the running node, charges, stamps and answers.
import { randomUUID } from "node:crypto"
import { open } from "node:fs/promises"
import { extname } from "node:path"
import { Duration, Effect, Either, Option, Stream } from "effect"
import { Change, LiftBlock, Post, type PostRefused, Publish, PublishUnsigned, SubmitSignatures } from "../../schemas/social/post.ts"
import { ledgerParams } from "../chain/params.ts"
import { findAccount } from "../social/accounts/Accounts.ts"
import { memberSigns } from "../social/accounts/signing.ts"
import { readAccountKey, signStamps } from "./socialSign.ts"
import { AppConfig } from "../platform/Config.ts"
import { SocialConfig } from "../social/SocialConfig.ts"
import { saveLiveChannel, setLiveStream, type StreamRefusal } from "../social/pages/liveChannels.ts"
import { findPostId } from "../social/posts/postIds.ts"
import { realNodeRefusal, realNodeSetting } from "../platform/devnet/realNode.ts"
import { createAccount } from "../social/accounts/Accounts.ts"
import { blockingPosts } from "../social/content/blocked.ts"
import { parseRawCid } from "../crypto/cid.ts"
import { typesByExtension } from "../social/content/mediaTypes.ts"
import { putMedia } from "../social/content/putMedia.ts"
import * as ContentStoreLive from "../social/content/ContentStoreLive.ts"
import { issueSocialLinkToken } from "../social/identity/issueLinkToken.ts"
import { socialUrls } from "../social/identity/urls.ts"
import { runningBaseUrl } from "../platform/http/NodeListeners.ts"
import { parseOrUsage } from "./args.ts"
import { fileProblem, printJsonOr, runCommand, UsageError } from "./runtime.ts"

const usage = [
  "usage: social account create [--handle NAME] [--json]",
  "       social post --account ADDR --body TEXT [--kind story|photo|video|text] [--tags a,b] [--media FILE]... [--xprv-file FILE] [--json]",
  "       social takedown --post ID [--json]",
  "       social moderate --post ID --reason TEXT [--json]",
  "       social moderate --lift CID [--reason TEXT] [--json]",
  "       social timeline --address ADDR [--xpub XPUB] [--json]",
  "       social live add --stream ID --wallet ADDR --title TEXT [--json]",
  "       social live stream --stream ID (--playlist CID | --offline) [--json]",
  "       social link-token --account ADDR [--json]"
].join("\n")

const replyTimeout = Duration.seconds(60)
const kinds = ["story", "photo", "video", "text"] as const

const noAnswer = () => new Error("the node did not answer in time: is it running with the same SHARDLINE_DATABASE_URL or SHARDLINE_DATA_DIR?")
const ask = <A, E>(effect: Effect.Effect<A, E>) => effect.pipe(Effect.timeoutFail({ duration: replyTimeout, onTimeout: noAnswer }))
const refusalText = (e: PostRefused) => new Error(`refused (${e.code}): ${e.message}`)

/** A post's long id from either id form. */
const postIdOf = (id: string) =>
  Effect.gen(function*() {
    const found = yield* findPostId(id)
    if (Option.isNone(found)) return yield* Effect.fail(new UsageError(`no post ${id.slice(0, 64)}`))
    return found.value
  })

const upload = (file: string) =>
  Effect.gen(function*() {
    // Opened first, so a missing or unreadable file is one line here, not an 'error' event the
    // stream has no listener for yet. The extension names the declared type; the file's bytes
    // decide (mediaTypes.ts), as for the composer's upload.
    const handle = yield* Effect.tryPromise({ try: () => open(file, "r"), catch: (e) => new UsageError(`--media ${file}: ${fileProblem(e)}`) })
    const bytes = Stream.fromAsyncIterable(handle.createReadStream() as AsyncIterable<Buffer>, (e) => new UsageError(`--media ${file}: ${fileProblem(e)}`))
    return (yield* putMedia(bytes, typesByExtension[extname(file).toLowerCase()]).pipe(
      Effect.catchTag("MediaRefused", (e) => Effect.fail(new UsageError(`--media ${file}: ${e.message}`))),
      Effect.ensuring(Effect.promise(() => handle.close().catch(() => undefined)))
    )).cid
  })

/** `social post` for an xpub-only account: stamps built by the node, signed here (socialSign.ts), sent back. */
const publishSignedHere = (postId: string, publish: PublishUnsigned, xprvFile: string | undefined) =>
  Effect.gen(function*() {
    if (xprvFile === undefined) {
      return yield* Effect.fail(new UsageError("this account's keys are in the member's wallet: pass --xprv-file FILE (its m/44'/696969'/1101' extended private key, used only here)"))
    }
    const key = readAccountKey(xprvFile, ledgerParams)
    if (Either.isLeft(key)) return yield* Effect.fail(new UsageError(key.left))
    const client = (yield* Post.client)(postId)
    const view = yield* ask(client.PublishUnsigned(publish)).pipe(Effect.catchTag("PostRefused", (e) => Effect.fail(refusalText(e))))
    const signed = signStamps(view.stamps.map((s) => s.psbt), key.right, ledgerParams)
    if (Either.isLeft(signed)) return yield* Effect.fail(new UsageError(`${signed.left} (the post waits for signatures until ${view.expiresAt})`))
    return yield* ask(client.SubmitSignatures(new SubmitSignatures({ postId, items: [...signed.right], submissionId: randomUUID() }))).pipe(
      Effect.catchTag("PostRefused", (e) => Effect.fail(refusalText(e))))
  })

/**
 * `social moderate --lift CID`: ends every moderation block of the CID, each through the Post entity
 * whose pull made it (src/social/content/blocked.ts); the pulled posts stay pulled.
 */
const liftBlocks = (cidText: string, reason: string | undefined) =>
  Effect.gen(function*() {
    const parsed = parseRawCid(cidText.trim())
    if (Either.isLeft(parsed)) return yield* Effect.fail(new UsageError(`--lift: ${parsed.left.message}`))
    const cid = parsed.right.cid
    const posts = yield* blockingPosts(cid)
    if (posts.length === 0) return yield* Effect.fail(new UsageError(`no moderation block on ${cid}`))
    const client = yield* Post.client
    const lifted: Array<{ postId: string; liftedAt: string | null }> = []
    for (const postId of posts) {
      const r = yield* ask(client(postId).LiftBlock(new LiftBlock({ postId, cid, requestId: randomUUID(), ...(reason === undefined ? {} : { reason }) }))).pipe(
        Effect.catchTag("PostRefused", (e) => Effect.fail(refusalText(e))))
      lifted.push({ postId: r.postId, liftedAt: r.liftedAt })
    }
    return { cid, blocked: false, lifted }
  })

/** The URL a running node serves the social listener at; this process's settings when none runs. */
const nodeBaseUrl = runningBaseUrl("social", Effect.map(socialUrls, (u) => u.base))

const streamRefusals: Record<StreamRefusal, string> = {
  unknown_channel: "no live channel with this --stream (add it with `social live add`)",
  unknown_content: "--playlist is not in the content store: upload the playlist first",
  not_a_playlist: "--playlist is not an HLS playlist (its bytes must start with #EXTM3U)"
}

/** `social live stream`: the channel's current HLS playlist (a CID already uploaded), or offline. */
const liveStream = (stream: string | undefined, playlist: string | undefined, offline: boolean, print: (a: unknown) => void) => {
  if (stream === undefined || (playlist === undefined) === !offline) {
    console.error(`--stream and one of --playlist CID or --offline are required\n${usage}`)
    return 2
  }
  return runCommand(Effect.gen(function*() {
    const parsed = playlist === undefined ? undefined : parseRawCid(playlist.trim())
    if (parsed !== undefined && Either.isLeft(parsed)) return yield* Effect.fail(new UsageError(`--playlist: ${parsed.left.message}`))
    const cid = parsed === undefined ? null : parsed.right.cid
    const refused = yield* setLiveStream(stream, cid)
    if (Option.isSome(refused)) return yield* Effect.fail(new UsageError(streamRefusals[refused.value]))
    const base = yield* nodeBaseUrl
    return { streamId: stream, playlistCid: cid, embed: `${base}/embed/live/${stream}`, playlist: `${base}/live/${stream}/index.m3u8` }
  }).pipe(Effect.provide(ContentStoreLive.layer)), print)
}

/** `social link-token`: the wallet-link QR of an account (src/social/identity). */
const linkToken = (account: string | undefined, json: boolean): Promise<number> | number => {
  const a = account?.trim()
  if (a === undefined || a === "") {
    console.error(`social link-token needs --account ADDR\n${usage}`)
    return 2
  }
  return runCommand(Effect.flatMap(nodeBaseUrl, (base) => issueSocialLinkToken(a, base)), (r) =>
    console.log(json ? JSON.stringify({ token: r.token, url: r.url, expiresAt: r.expiresAt }) : `url:       ${r.url}\nexpiresAt: ${r.expiresAt}\n(single use, valid 5 minutes)`))
}

export const run = async (args: ReadonlyArray<string>): Promise<number> => {
  const [group, ...rest0] = args
  const nested = group === "account" || group === "live"
  const verb = nested ? rest0[0] : group
  const rest = nested ? rest0.slice(1) : rest0
  const parsed = parseOrUsage(rest, {
    handle: { type: "string" }, account: { type: "string" }, body: { type: "string" }, kind: { type: "string" }, tags: { type: "string" },
    media: { type: "string", multiple: true }, stream: { type: "string" }, playlist: { type: "string" }, offline: { type: "boolean", default: false }, wallet: { type: "string" }, title: { type: "string" }, post: { type: "string" }, reason: { type: "string" }, lift: { type: "string" }, address: { type: "string" }, xpub: { type: "string" }, "xprv-file": { type: "string" },
    json: { type: "boolean", default: false }
  }, usage)
  if (parsed === undefined) return 2
  const v = parsed.values
  const print = printJsonOr(v.json, (a) => JSON.stringify(a, null, 2))

  if (verb === "link-token") return linkToken(v.account, v.json === true)

  if (group === "account" && verb === "create") {
    return runCommand(Effect.gen(function*() {
      const config = yield* AppConfig
      const setting = realNodeSetting(config, "ledger")
      if (setting !== undefined) return yield* Effect.fail(realNodeRefusal("social account create", "ledger", setting))
      return yield* createAccount(v.handle)
    }), print)
  }
  if (verb === "post") {
    if (v.account === undefined || v.body === undefined) {
      console.error(`--account and --body are required\n${usage}`)
      return 2
    }
    const kind = (v.kind ?? "story") as typeof kinds[number]
    if (!kinds.includes(kind)) {
      console.error(`--kind must be one of ${kinds.join(", ")}`)
      return 2
    }
    const tags = v.tags === undefined ? [] : v.tags.split(",").map((t) => t.trim()).filter((t) => t !== "")
    return runCommand(Effect.gen(function*() {
      const mediaCids: Array<string> = []
      for (const file of v.media ?? []) mediaCids.push(yield* upload(file))
      const postId = randomUUID()
      const client = (yield* Post.client)(postId)
      const account = yield* findAccount(v.account!)
      // An xpub-only account: the node builds the stamps, this process signs them with the account key.
      if (Option.isSome(account) && memberSigns(account.value)) return yield* publishSignedHere(postId, new PublishUnsigned({ postId, author: v.account!, kind, body: v.body!, tags, mediaCids }), v["xprv-file"])
      return yield* ask(client.Publish(new Publish({ postId, author: v.account!, kind, body: v.body!, tags, mediaCids }))).pipe(
        Effect.catchTag("PostRefused", (e) => Effect.fail(refusalText(e))))
    }).pipe(Effect.provide(ContentStoreLive.layer)), print)
  }
  if (verb === "moderate" && v.lift !== undefined) {
    if (v.post !== undefined) {
      console.error(`--lift takes a CID and no --post\n${usage}`)
      return 2
    }
    return runCommand(liftBlocks(v.lift, v.reason), print)
  }
  if (verb === "takedown" || verb === "moderate") {
    if (v.post === undefined || (verb === "moderate" && v.reason === undefined)) {
      console.error(`--post${verb === "moderate" ? " and --reason are" : " is"} required\n${usage}`)
      return 2
    }
    return runCommand(Effect.gen(function*() {
      const postId = yield* postIdOf(v.post!)
      const client = (yield* Post.client)(postId)
      return yield* ask(client.Change(new Change({ postId, action: verb, ...(v.reason === undefined ? {} : { reason: v.reason }), requestId: randomUUID() }))).pipe(
        Effect.catchTag("PostRefused", (e) => Effect.fail(refusalText(e))))
    }), print)
  }
  if (group === "live" && verb === "add") {
    if (v.stream === undefined || v.wallet === undefined || v.title === undefined) {
      console.error(`--stream, --wallet and --title are required\n${usage}`)
      return 2
    }
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(v.stream) || !/^[A-Za-z0-9]{20,90}$/.test(v.wallet) || v.title.length > 200) {
      console.error("--stream is 1 to 64 of A-Z a-z 0-9 _ -, --wallet a chain address, --title at most 200 characters")
      return 2
    }
    return runCommand(Effect.gen(function*() {
      yield* saveLiveChannel({ streamId: v.stream!, wallet: v.wallet!, title: v.title! })
      return { streamId: v.stream!, wallet: v.wallet!, title: v.title!, embed: `${yield* nodeBaseUrl}/embed/live/${v.stream!}` }
    }), print)
  }
  if (group === "live" && verb === "stream") return liveStream(v.stream, v.playlist, v.offline === true, print)
  if (verb === "timeline") {
    if (v.address === undefined) {
      console.error(`--address is required\n${usage}`)
      return 2
    }
    // The node holds the chain (an in-process devnet, or its node's adapter): its public endpoint
    // rebuilds the timeline from the chain, the same code anyone can run. It is reached at the
    // running node's public URL (node_listeners); with none running, at this process's host and port.
    const own = Effect.map(Effect.all([AppConfig, SocialConfig]), ([config, social]) =>
      `http://${config.httpHost === "0.0.0.0" ? "127.0.0.1" : config.httpHost}:${social.socialHttpPort}`)
    return runCommand(Effect.gen(function*() {
      const base = yield* runningBaseUrl("social", own)
      const query = v.xpub === undefined ? "" : `?xpub=${encodeURIComponent(v.xpub)}`
      const r = yield* Effect.tryPromise({
        try: () => fetch(`${base}/api/public/timeline/${encodeURIComponent(v.address!)}${query}`),
        catch: () => noAnswer()
      })
      const body = yield* Effect.promise(() => r.json() as Promise<Record<string, unknown>>)
      if (r.status !== 200) return yield* Effect.fail(new Error(`refused: ${JSON.stringify(body)}`))
      return body
    }), print)
  }
  console.error(usage)
  return 2
}


