// UtxoLedger over a bitcoind-compatible JSON-RPC node (tested against litecoind 0.21 -regtest).
// Needs no wallet: getblockchaininfo, getblockhash/getblock (raw), getrawtransaction (needs
// -txindex), getblockheader, testmempoolaccept, sendrawtransaction, scantxoutset and, for
// devnets, generatetoaddress. No ZMQ in the Debian build, so the follower polls.
//
// The app speaks ledger addresses (`params`); the node has its own version bytes (`nodeParams`).
// Scripts are the same bytes on both sides, so only `mine` converts an address, here at the edge.
// Amounts come from transaction outputs (bigint), never from the node's JSON floats, except the
// fee testmempoolaccept reports, converted once in `satsOfCoins`.
import { Agent as HttpAgent, request as httpRequest } from "node:http"
import { Agent as HttpsAgent, request as httpsRequest } from "node:https"
import { Data, Duration, Effect, Either, Layer, Schedule } from "effect"
import { encodeAddress, validateLedgerAddress } from "../address.ts"
import { broadcastSpan } from "../broadcastSpan.ts"
import { ledgerParams, type UtxoChainParams } from "../params.ts"
import { splitBlock } from "./internal/rawBlock.ts"
import { bytesHex, ownerScript, parseTx } from "./internal/scripts.ts"
import { knownParsed } from "../parsedTx.ts"
import {
  checkHeight,
  checkMine,
  checkPage,
  checkTxid,
  LedgerBlockNotFound,
  LedgerInvalidInput,
  ledgerLimits,
  LedgerRpcError,
  LedgerTxNotFound,
  LedgerTxRejected,
  UtxoLedger,
  type BroadcastError,
  type LedgerBlock,
  type LedgerTip,
  type LedgerUtxo,
  type Owner,
  type RejectCode,
  type UtxoLedgerShape
} from "./UtxoLedger.ts"

export interface RpcLedgerOptions {
  /** `http://user:password@host:port/`; credentials in the URL become the Basic auth header. */
  readonly url: string
  /** Override the URL's credentials (e.g. read from a secret store). */
  readonly username?: string
  readonly password?: string
  /** The app-side chain rules and address format; default the token ledger's. */
  readonly params?: UtxoChainParams
  /** The node's own address format (e.g. litecoinRegtestParams); used only by `mine`. */
  readonly nodeParams: UtxoChainParams
  /** Per call; `mine` adds `mineMsPerBlock` per block. */
  readonly timeoutMs?: number
}

export const rpcDefaults = {
  timeoutMs: 15_000,
  mineMsPerBlock: 20,
  /** getrawtransaction calls in flight while listing unspent outputs. */
  prevTxConcurrency: 8,
  /** scantxoutset is one-at-a-time per node; wait this long between retries, this many times. */
  scanRetryMs: 100,
  scanRetries: 50,
  /** sendrawtransaction calls in one JSON-RPC batch at most; more wait for the next. */
  broadcastBatchMax: 500,
  /** Blocks kept by hash once read (the few newest are what every follower of the tip reads). */
  blocksKept: 16
} as const

/** JSON-RPC error codes of bitcoind we act on. */
const RPC_INVALID_ADDRESS_OR_KEY = -5
const RPC_DESERIALIZATION_ERROR = -22
const RPC_VERIFY_ERROR = -25
const RPC_VERIFY_REJECTED = -26
const RPC_VERIFY_ALREADY_IN_CHAIN = -27
const RPC_INVALID_PARAMETER = -8

interface RpcFailure {
  readonly method: string
  readonly code: number | undefined
  readonly message: string
}

/** Normalises a node's reject reason (testmempoolaccept or sendrawtransaction text). */
export const rejectCodeOf = (reason: string): RejectCode => {
  const r = reason.toLowerCase()
  if (r.includes("multi-op-return")) return "multi-op-return"
  if (r.includes("dust")) return "dust"
  if (r.includes("txn-mempool-conflict")) return "double-spend"
  if (r.includes("premature-spend-of-coinbase")) return "immature-coinbase"
  if (r.includes("missing-inputs") || r.includes("missing inputs") || r.includes("missingorspent")) return "missing-inputs"
  if (r.includes("min relay fee") || r.includes("mempool min fee") || r.includes("insufficient fee")) return "fee-too-low"
  if (r.includes("already in block chain") || r.includes("txn-already-known") || r.includes("txn-already-in-mempool")) return "already-known"
  if (r.includes("mempool full")) return "mempool-full"
  if (r.includes("scriptpubkey") || r.includes("bare-multisig") || r.includes("tx-size")) return "nonstandard-script"
  if (r.includes("script-verify-flag") || r.includes("signature")) return "bad-signature"
  return "invalid"
}

export interface RpcEndpoint {
  /** The URL without credentials: fetch refuses a URL that carries them. */
  readonly url: string
  readonly authorization: string | undefined
}

/** Hides the `user:password@` of every URL in a text (errors, reports) before anyone sees it. */
export const redactUrlCredentials = (text: string): string => text.replace(/\/\/[^/@]*@/g, "//***@")

/** A node URL that cannot be used; `message` never shows its credentials. */
export class RpcUrlInvalid extends Data.TaggedError("RpcUrlInvalid")<{ readonly message: string }> {}

const urlInvalid = (message: string) => Either.left(new RpcUrlInvalid({ message }))

/** Splits `http://user:pass@host/` into a credential-free URL and a Basic auth header. */
export const rpcEndpoint = (url: string, username?: string, password?: string): Either.Either<RpcEndpoint, RpcUrlInvalid> => {
  if (!URL.canParse(url)) return urlInvalid(`not a URL: ${redactUrlCredentials(url)}`)
  const u = new URL(url)
  if (u.protocol !== "http:" && u.protocol !== "https:") return urlInvalid(`expected http or https, got ${u.protocol}`)
  let user: string
  let pass: string
  try {
    user = username ?? decodeURIComponent(u.username)
    pass = password ?? decodeURIComponent(u.password)
  } catch {
    // URL keeps a malformed escape such as "%zz" as typed; decodeURIComponent throws on it.
    return urlInvalid("the URL's user or password has a malformed %-escape")
  }
  u.username = ""
  u.password = ""
  const authorization = user === "" && pass === "" ? undefined : "Basic " + Buffer.from(`${user}:${pass}`).toString("base64")
  return Either.right({ url: u.toString(), authorization })
}

const blockUnreadable = (message: string) => Either.left(new LedgerRpcError({ method: "getblock", message }))

/** A raw block from getblock <hash> 0 as the port's block; the header must hash to `hash`. */
const portBlock = (height: number, hash: string, raw: string): Either.Either<LedgerBlock, LedgerRpcError> => {
  const block = splitBlock(raw)
  if (Either.isLeft(block)) return blockUnreadable(`block ${hash} does not parse: ${block.left}`)
  if (block.right.hash !== hash) return blockUnreadable(`block hash mismatch at ${height}`)
  return Either.right({ height, hash, prevHash: block.right.prevHash, time: block.right.time, txs: block.right.txs })
}

/** Coins as the node prints them (8-decimal JSON numbers) to satoshis, exactly. */
export const satsOfCoins = (coins: number): bigint => {
  const [whole, frac = ""] = Math.abs(coins).toFixed(8).split(".")
  const sats = BigInt(whole!) * 100_000_000n + BigInt(frac.padEnd(8, "0"))
  return coins < 0 ? -sats : sats
}

/**
 * One POST over node:http(s) with a keep-alive agent; the status and the body as text. Not fetch:
 * on Node 20 fetch (undici, web streams) spent about 1.9 ms of CPU per trade on the two broadcasts
 * and the per-block reads of a leg (tradeCpu with litecoind, issue 22), several times this.
 * `signal` aborts the request (its socket is destroyed), as it did the fetch.
 */
const postText = (
  url: URL,
  agent: HttpAgent | HttpsAgent,
  headers: Readonly<Record<string, string>>,
  body: string,
  signal: AbortSignal
): Promise<{ readonly status: number; readonly text: string }> =>
  new Promise((resolve, reject) => {
    const send = url.protocol === "https:" ? httpsRequest : httpRequest
    const req = send(url, { method: "POST", agent, signal, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(body)
  })

export const makeRpcLedger = (options: RpcLedgerOptions): UtxoLedgerShape => {
  const params = options.params ?? ledgerParams
  const timeoutMs = options.timeoutMs ?? rpcDefaults.timeoutMs
  const endpoint = rpcEndpoint(options.url, options.username, options.password)
  const headers: Record<string, string> = { "content-type": "application/json" }
  const authorization = Either.isRight(endpoint) ? endpoint.right.authorization : undefined
  if (authorization !== undefined) headers["authorization"] = authorization
  let nextId = 0
  const target = Either.isRight(endpoint) ? new URL(endpoint.right.url) : undefined
  // Idle sockets are kept a while (the node's own idle limit, -rpcservertimeout, is 30 s) and never hold the process open.
  const agentOptions = { keepAlive: true, maxSockets: 16, timeout: 15_000 }
  const agent = target?.protocol === "https:" ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions)

  // The call's limit is an Effect timer: when it fires, the call is interrupted and `signal`
  // aborts the fetch (its socket is destroyed). Not AbortSignal.timeout inside AbortSignal.any: on
  // Node 20 nothing holds that timeout signal but a weak reference, a garbage collection takes it
  // and it never fires (nodejs/node#57736), so a node that accepted the call and never answered
  // held it for ever (a Post entity's Change stuck in the fee sponsor's listUnspent, the retry of
  // the same request never answered; rpcLedger.test.ts).
  const post = (method: string, body: unknown, ms: number) =>
    Effect.tryPromise({
      try: async (signal) => {
        // A bad URL fails every call with a typed error; layerRpc refuses it before any call.
        if (Either.isLeft(endpoint) || target === undefined) throw new Error(Either.isLeft(endpoint) ? endpoint.left.message : "no URL")
        // bitcoind answers errors with HTTP 500 and a JSON-RPC body: read the body either way.
        const { status, text } = await postText(target, agent, headers, JSON.stringify(body), signal)
        if (status === 401) throw new Error("401 unauthorized (rpc user/password)")
        return JSON.parse(text) as unknown
      },
      catch: (e): RpcFailure => ({ method, code: undefined, message: e instanceof Error ? e.message : String(e) })
    }).pipe(Effect.timeoutFail({
      duration: Duration.millis(ms),
      onTimeout: (): RpcFailure => ({ method, code: undefined, message: `no answer within ${ms} ms` })
    }))

  type Reply = { result?: unknown; error?: { code: number; message: string } | null; id?: number }

  const call = <T>(method: string, rpcParams: ReadonlyArray<unknown>, ms = timeoutMs): Effect.Effect<T, RpcFailure> =>
    Effect.flatMap(post(method, { jsonrpc: "1.0", id: ++nextId, method, params: rpcParams }, ms), (body) => {
      const reply = body as Reply
      if (reply.error !== undefined && reply.error !== null) return Effect.fail({ method, code: reply.error.code, message: reply.error.message })
      return Effect.succeed(reply.result as T)
    })

  /** One HTTP round trip for many calls of one method (JSON-RPC batch); results in order. */
  const batch = <T>(method: string, calls: ReadonlyArray<ReadonlyArray<unknown>>): Effect.Effect<ReadonlyArray<T>, RpcFailure> => {
    if (calls.length === 0) return Effect.succeed([])
    const first = nextId + 1
    const body = calls.map((p) => ({ jsonrpc: "1.0", id: ++nextId, method, params: p }))
    return Effect.flatMap(post(method, body, timeoutMs), (raw): Effect.Effect<ReadonlyArray<T>, RpcFailure> => {
      if (!Array.isArray(raw)) return Effect.fail({ method, code: undefined, message: "batch answer is not an array" })
      const byId = new Map((raw as Array<Reply>).map((r) => [r.id, r] as const))
      const out: Array<T> = []
      for (let i = 0; i < calls.length; i++) {
        const r = byId.get(first + i)
        if (r === undefined) return Effect.fail({ method, code: undefined, message: `batch answer lacks id ${first + i}` })
        if (r.error !== undefined && r.error !== null) return Effect.fail({ method, code: r.error.code, message: r.error.message })
        out.push(r.result as T)
      }
      return Effect.succeed(out)
    })
  }

  const transport = (f: RpcFailure) => new LedgerRpcError({ method: f.method, message: f.code === undefined ? f.message : `${f.message} (${f.code})` })
  const invalid = (field: string, message: string) => new LedgerInvalidInput({ field, message })

  // A transaction this process built (a leg) is known with its txid: no second parse and hash.
  const localTxid = (hex: string) => {
    const known = knownParsed(hex)
    if (known !== undefined) return Effect.succeed(known.txid)
    return Either.match(parseTx(hex), {
      onLeft: (e) => Effect.fail(invalid("hex", e.message)),
      onRight: (tx) => Effect.succeed(tx.getId())
    })
  }

  // One call, not getblockcount + getbestblockhash: a block found between two calls would pair a
  // height with another block's hash.
  const tip: Effect.Effect<LedgerTip, LedgerRpcError> = Effect.mapError(
    Effect.map(call<{ blocks: number; bestblockhash: string }>("getblockchaininfo", []), (i) => ({ height: i.blocks, hash: i.bestblockhash })),
    transport
  )

  const rawTx = (txid: string) => call<string>("getrawtransaction", [txid, false])

  // scantxoutset refuses a second scan while one runs; serialise ours and retry others'.
  const scanLock = Effect.unsafeMakeSemaphore(1)
  const scan = (descriptors: ReadonlyArray<string>) =>
    scanLock.withPermits(1)(
      call<{ success: boolean; height: number; unspents: Array<{ txid: string; vout: number; height: number }> }>("scantxoutset", ["start", descriptors]).pipe(
        Effect.retry({
          times: rpcDefaults.scanRetries,
          schedule: Schedule.spaced(rpcDefaults.scanRetryMs),
          while: (f) => f.code === RPC_INVALID_PARAMETER && /in progress/i.test(f.message)
        })
      )
    )

  const listUnspent = (owners: ReadonlyArray<Owner>) =>
    Effect.gen(function* () {
      if (owners.length > ledgerLimits.listUnspentOwnersMax) return yield* Effect.fail(invalid("owners", `at most ${ledgerLimits.listUnspentOwnersMax} per call`))
      if (owners.length === 0) return []
      const descriptors: Array<string> = []
      for (const [i, o] of owners.entries()) {
        const s = yield* Effect.mapError(ownerScript(o, params), (e) => invalid(`owners[${i}]`, e.message))
        // raw(<script>) matches the exact output script: no address conversion needed.
        descriptors.push(`raw(${bytesHex(s)})`)
      }
      const result = yield* Effect.mapError(scan(descriptors), transport)
      if (result.unspents.length > ledgerLimits.listUnspentResultsMax) {
        return yield* Effect.fail(invalid("owners", `more than ${ledgerLimits.listUnspentResultsMax} unspent outputs; ask for fewer owners`))
      }
      const txids = [...new Set(result.unspents.map((u) => u.txid))]
      const hexes = yield* Effect.mapError(Effect.forEach(txids, rawTx, { concurrency: rpcDefaults.prevTxConcurrency }), transport)
      const byTxid = new Map(txids.map((t, i) => [t, hexes[i]!] as const))
      const out: Array<LedgerUtxo> = []
      for (const u of result.unspents) {
        const prevTxHex = byTxid.get(u.txid)!
        const tx = Either.getOrUndefined(parseTx(prevTxHex))
        const output = tx?.outs[u.vout]
        if (tx === undefined || output === undefined) return yield* Effect.fail(new LedgerRpcError({ method: "getrawtransaction", message: `${u.txid}:${u.vout} does not parse` }))
        out.push({
          txid: u.txid,
          vout: u.vout,
          value: output.value,
          script: output.script,
          prevTxHex,
          height: u.height,
          confirmations: result.height - u.height + 1,
          coinbase: tx.isCoinbase()
        })
      }
      return out.sort((a, b) => a.height - b.height || (a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : a.vout - b.vout))
    })

  const getTx = (txid: string) =>
    Effect.gen(function* () {
      yield* checkTxid(txid)
      const info = yield* call<{ hex: string; confirmations?: number; blockhash?: string }>("getrawtransaction", [txid, true]).pipe(
        Effect.mapError((f) => (f.code === RPC_INVALID_ADDRESS_OR_KEY ? new LedgerTxNotFound({ txid }) : transport(f)))
      )
      if (info.blockhash === undefined || (info.confirmations ?? 0) === 0) {
        return { txid, hex: info.hex, confirmations: 0, blockHash: undefined, blockHeight: undefined }
      }
      const header = yield* Effect.mapError(call<{ height: number; confirmations: number }>("getblockheader", [info.blockhash, true]), transport)
      // A header off the active chain reports -1: the transaction is back to unconfirmed.
      if (header.confirmations < 1) return { txid, hex: info.hex, confirmations: 0, blockHash: undefined, blockHeight: undefined }
      return { txid, hex: info.hex, confirmations: header.confirmations, blockHash: info.blockhash, blockHeight: header.height }
    })

  const testAccept = (hex: string) =>
    Effect.gen(function* () {
      const txid = yield* localTxid(hex)
      const [r] = yield* call<Array<{ txid: string; allowed: boolean; vsize?: number; fees?: { base: number }; "reject-reason"?: string }>>(
        "testmempoolaccept",
        [[hex]]
      ).pipe(Effect.mapError((f) => (f.code === RPC_DESERIALIZATION_ERROR ? invalid("hex", f.message) : transport(f))))
      if (r === undefined) return yield* Effect.fail(new LedgerRpcError({ method: "testmempoolaccept", message: "empty answer" }))
      if (r.allowed) return { allowed: true as const, txid, vsize: r.vsize ?? 0, fee: satsOfCoins(r.fees?.base ?? 0) }
      const reason = r["reject-reason"] ?? "rejected"
      return { allowed: false as const, txid, code: rejectCodeOf(reason), reason }
    })

  /** A sendrawtransaction answer (or the transport's failure) as the port's result for `txid`. */
  const broadcastResult = (txid: string, reply: Reply | RpcFailure): Either.Either<string, BroadcastError> => {
    const f: RpcFailure | undefined = "method" in reply
      ? reply
      : reply.error !== undefined && reply.error !== null ? { method: "sendrawtransaction", code: reply.error.code, message: reply.error.message } : undefined
    if (f !== undefined) {
      if (f.code === RPC_DESERIALIZATION_ERROR) return Either.left(invalid("hex", f.message))
      if (f.code === RPC_VERIFY_REJECTED || f.code === RPC_VERIFY_ERROR || f.code === RPC_VERIFY_ALREADY_IN_CHAIN) {
        return Either.left(new LedgerTxRejected({ txid, code: rejectCodeOf(f.message), reason: f.message }))
      }
      return Either.left(transport(f))
    }
    const sent = (reply as Reply).result
    // Invariant: the node hashes the same bytes we did.
    if (sent !== txid) return Either.left(new LedgerRpcError({ method: "sendrawtransaction", message: `node returned txid ${String(sent)}, computed ${txid}` }))
    return Either.right(txid)
  }

  // Broadcasts are coalesced (issue 22): one sendrawtransaction request at a time, and every
  // broadcast that arrives while it is out goes in the next one, as a JSON-RPC batch (the node
  // runs a batch's calls in order, so a child queued after its parent is taken). An order's
  // settlement broadcast each of its legs with its own HTTP request: two per trade, each costing
  // the node more CPU than signing the leg. Under light load a broadcast goes out at once, alone.
  interface Queued {
    readonly hex: string
    readonly txid: string
    readonly done: (r: Either.Either<string, BroadcastError>) => void
    abandoned: boolean
  }
  const queued: Array<Queued> = []
  let sending = false
  const sendQueued = (): void => {
    if (sending) return
    const calls = queued.splice(0, rpcDefaults.broadcastBatchMax).filter((c) => !c.abandoned)
    if (calls.length === 0) {
      if (queued.length > 0) sendQueued()
      return
    }
    sending = true
    const first = nextId + 1
    const body = JSON.stringify(calls.map((c) => ({ jsonrpc: "1.0", id: ++nextId, method: "sendrawtransaction", params: [c.hex] })))
    // The batch's own limit: a plain timer (see `post` on why not AbortSignal.timeout).
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
    const answer = async (): Promise<ReadonlyArray<Reply | RpcFailure>> => {
      const failAll = (message: string) => calls.map((): RpcFailure => ({ method: "sendrawtransaction", code: undefined, message }))
      if (Either.isLeft(endpoint) || target === undefined) return failAll(Either.isLeft(endpoint) ? endpoint.left.message : "no URL")
      try {
        const { status, text } = await postText(target, agent, headers, body, controller.signal)
        if (status === 401) return failAll("401 unauthorized (rpc user/password)")
        const raw = JSON.parse(text) as unknown
        // A node that answers a batch with one error object (it refused the batch as a whole).
        if (!Array.isArray(raw)) {
          const one = raw as Reply
          return one.error !== undefined && one.error !== null ? calls.map(() => one) : failAll("batch answer is not an array")
        }
        const byId = new Map((raw as Array<Reply>).map((r) => [r.id, r] as const))
        return calls.map((_, i) => byId.get(first + i) ?? { method: "sendrawtransaction", code: undefined, message: `batch answer lacks id ${first + i}` })
      } catch (e) {
        return failAll(controller.signal.aborted ? `no answer within ${timeoutMs} ms` : e instanceof Error ? e.message : String(e))
      }
    }
    void answer().then((replies) => {
      clearTimeout(timer)
      sending = false
      for (const [i, c] of calls.entries()) if (!c.abandoned) c.done(broadcastResult(c.txid, replies[i]!))
      sendQueued()
    })
  }

  const sendMany = (hexes: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<Either.Either<string, BroadcastError>>> =>
    Effect.gen(function* () {
      const results: Array<Either.Either<string, BroadcastError> | undefined> = []
      const toSend: Array<{ readonly at: number; readonly hex: string; readonly txid: string }> = []
      for (const [at, hex] of hexes.entries()) {
        const txid = yield* Effect.either(localTxid(hex))
        if (Either.isLeft(txid)) results.push(Either.left(txid.left))
        else {
          results.push(undefined)
          toSend.push({ at, hex, txid: txid.right })
        }
      }
      if (toSend.length > 0) {
        yield* Effect.async<void>((resume) => {
          let left = toSend.length
          const mine = toSend.map((t): Queued => ({
            hex: t.hex,
            txid: t.txid,
            abandoned: false,
            done: (r) => {
              results[t.at] = r
              if (--left === 0) resume(Effect.void)
            }
          }))
          queued.push(...mine)
          sendQueued()
          // Interrupted: what has not gone out yet is not sent (what has is harmless: the same bytes again).
          return Effect.sync(() => {
            for (const m of mine) m.abandoned = true
          })
        })
      }
      return results as ReadonlyArray<Either.Either<string, BroadcastError>>
    })

  // One span for the call (its transactions go out together): the ids the node took, and how many.
  const broadcastMany = (hexes: ReadonlyArray<string>) =>
    sendMany(hexes).pipe(
      Effect.tap((results) => Effect.annotateCurrentSpan("tx.id", results.flatMap((r) => (Either.isRight(r) ? [r.right] : [])).join(","))),
      Effect.withSpan("chain.broadcast", { kind: "client", captureStackTrace: false, attributes: { "chain.name": params.name, "tx.count": hexes.length } })
    )

  const broadcast = (hex: string) =>
    Effect.flatMap(sendMany([hex]), ([r]) => r!).pipe(broadcastSpan(params.name))

  // Blocks read, by hash (a hash names one block's bytes for ever, so a reorg cannot stale an
  // entry; the height is checked against the asker's anyway). Every market's leg sweep, the Omni
  // view's follower and the top-up scan read each new block, and the follower re-reads its tip
  // on every poll: one getblock and one split per block instead of one per reader (issue 22).
  const blockCache = new Map<string, LedgerBlock>()
  const remember = (block: LedgerBlock): LedgerBlock => {
    if (blockCache.size >= rpcDefaults.blocksKept) blockCache.delete(blockCache.keys().next().value!)
    blockCache.set(block.hash, block)
    return block
  }
  /** The block kept for `hash`, if it is the one at `height` the caller asked for. */
  const keptAt = (hash: string, height: number): LedgerBlock | undefined => {
    const kept = blockCache.get(hash)
    return kept !== undefined && kept.height === height ? kept : undefined
  }

  const blocks = (fromHeight: number, limit?: number) =>
    Effect.gen(function* () {
      const max = yield* checkPage(fromHeight, limit)
      const now = yield* tip
      const last = Math.min(now.height, fromHeight + max - 1)
      const heights = Array.from({ length: Math.max(0, last - fromHeight + 1) }, (_, i) => fromHeight + i)
      const hashes = yield* Effect.mapError(batch<string>("getblockhash", heights.map((h) => [h])), transport)
      const page: Array<LedgerBlock | undefined> = hashes.map((h, i) => keptAt(h, heights[i]!))
      const missing = page.flatMap((b, i) => (b === undefined ? [i] : []))
      const raws = yield* Effect.mapError(batch<string>("getblock", missing.map((i) => [hashes[i], 0])), transport)
      for (const [j, raw] of raws.entries()) {
        const i = missing[j]!
        page[i] = remember(yield* portBlock(heights[i]!, hashes[i]!, raw))
      }
      return { blocks: page as Array<LedgerBlock>, nextHeight: fromHeight + page.length, tip: now }
    })

  const blockAt = (height: number) =>
    Effect.gen(function* () {
      yield* checkHeight(height)
      const hash = yield* call<string>("getblockhash", [height]).pipe(
        // -8 "Block height out of range": not there (yet).
        Effect.mapError((f) => (f.code === RPC_INVALID_PARAMETER ? new LedgerBlockNotFound({ height }) : transport(f)))
      )
      const kept = keptAt(hash, height)
      if (kept !== undefined) return kept
      const raw = yield* Effect.mapError(call<string>("getblock", [hash, 0]), transport)
      return remember(yield* portBlock(height, hash, raw))
    })

  const mine = (n: number, toAddress: string) =>
    Effect.gen(function* () {
      const count = yield* checkMine(n)
      const check = validateLedgerAddress(toAddress, params)
      if (!check.valid) return yield* Effect.fail(invalid("toAddress", check.error))
      // The edge: the same hash160 under the node's version bytes.
      const nodeAddress = yield* Effect.mapError(encodeAddress(check.hash160, check.type, options.nodeParams), (e) => invalid("toAddress", e.message))
      return yield* Effect.mapError(
        call<Array<string>>("generatetoaddress", [count, nodeAddress], timeoutMs + count * rpcDefaults.mineMsPerBlock),
        transport
      )
    })

  return { params, tip, listUnspent, getTx, testAccept, broadcast, broadcastMany, blocks, blockAt, mine }
}

/** UtxoLedger backed by a node over JSON-RPC; a malformed URL fails the layer, not each call. */
export const layerRpc = (options: RpcLedgerOptions): Layer.Layer<UtxoLedger, LedgerInvalidInput> =>
  Layer.effect(
    UtxoLedger,
    Effect.suspend(() => {
      const endpoint = rpcEndpoint(options.url, options.username, options.password)
      return Either.isRight(endpoint)
        ? Effect.succeed(makeRpcLedger(options))
        : Effect.fail(new LedgerInvalidInput({ field: "url", message: endpoint.left.message }))
    })
  )
