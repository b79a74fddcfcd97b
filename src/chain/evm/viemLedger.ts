// The EvmLedger over a JSON-RPC node through viem: a provider for ethereum/base/bsc in
// production, anvil in tests and docker-compose. The hot wallet signs locally and sends raw
// bytes; the node never holds a key. `mine` works only when the node is anvil (`devRpc`).
import { Effect, Layer, type Redacted } from "effect"
import {
  BaseError,
  createPublicClient,
  createTestClient,
  hexToBigInt,
  hexToNumber,
  http,
  HttpRequestError,
  numberToHex,
  TimeoutError,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  WebSocketRequestError,
  type Address,
  type Hash,
  type Hex
} from "viem"
import { evmChains, viemChain, type EvmChain } from "./chains.ts"
import {
  EvmChainMismatch,
  EvmLedgers,
  EvmRpcError,
  EvmTxRejected,
  EvmUnsupported,
  ledgersOf,
  type EvmInvalidInput,
  type EvmLedger
} from "./EvmLedger.ts"
import type { BackendTxState, EvmBackend } from "./internal/backend.ts"
import { hotWalletAccount } from "./internal/input.ts"
import { makeLedger, revertReason } from "./internal/ledger.ts"
import { type NativeTransfer, paying } from "./nativeTransfers.ts"

export interface ViemLedgerOptions {
  readonly chain: EvmChain
  readonly rpcUrl: string
  readonly hotWalletKey: Redacted.Redacted<string>
  /** Set when the node is anvil: enables `mine`. */
  readonly devRpc?: "anvil"
  /** Per request, milliseconds. */
  readonly rpcTimeoutMs?: number
  /** The provider's eth_getLogs block-range limit (default `evmLimits.scanBlocksMax`). */
  readonly scanBlocksMax?: bigint
}

export const defaultRpcTimeoutMs = 10_000
/** Retries of a failed request by viem's transport (with its backoff) before we report it. */
const RPC_RETRIES = 1

const errorMessage = (e: unknown): string => (e instanceof BaseError ? e.shortMessage : e instanceof Error ? e.message : String(e))

/** Connection refused, timeout, a non-JSON answer: the node did not judge the request. */
const isTransportError = (e: unknown): boolean =>
  e instanceof BaseError && e.walk((x) => x instanceof HttpRequestError || x instanceof TimeoutError || x instanceof WebSocketRequestError) !== null

const isHex = (v: unknown): v is Hex => typeof v === "string" && /^0x[0-9a-fA-F]*$/.test(v)

/** Revert data somewhere in viem's error chain (nodes put it under `data`, sometimes nested). */
const revertDataOf = (e: unknown): Hex | undefined => {
  if (!(e instanceof BaseError)) return undefined
  let found: Hex | undefined
  e.walk((x) => {
    const data: unknown = (x as { data?: unknown }).data
    const hex = isHex(data) ? data : isHex((data as { data?: unknown } | undefined)?.data) ? (data as { data: Hex }).data : undefined
    if (hex !== undefined && hex !== "0x") found = hex
    return found !== undefined
  })
  return found
}

/** A reason a person can act on: the decoded revert if there is one, else viem's short message. */
const rejectionReason = (e: unknown): string => {
  const data = revertDataOf(e)
  return data === undefined ? errorMessage(e) : `execution reverted: ${revertReason(data)}`
}

const viemBackend = (options: ViemLedgerOptions): EvmBackend => {
  const { chain } = options
  const transport = http(options.rpcUrl, { timeout: options.rpcTimeoutMs ?? defaultRpcTimeoutMs, retryCount: RPC_RETRIES })
  const vchain = viemChain(chain, options.rpcUrl)
  const client = createPublicClient({ chain: vchain, transport })
  const testClient = options.devRpc === "anvil" ? createTestClient({ chain: vchain, transport, mode: "anvil" }) : undefined

  const rpc = <A>(method: string, f: () => Promise<A>) =>
    Effect.tryPromise({ try: f, catch: (e) => new EvmRpcError({ chain, method, message: errorMessage(e) }) })

  /** The node judged the request and said no (revert, nonce, fee): EvmTxRejected; transport trouble stays EvmRpcError. */
  const judged = <A>(method: string, f: () => Promise<A>) =>
    Effect.tryPromise({
      try: f,
      catch: (e) => (isTransportError(e) ? new EvmRpcError({ chain, method, message: errorMessage(e) }) : new EvmTxRejected({ chain, reason: rejectionReason(e) }))
    })

  return {
    chainId: rpc("eth_chainId", () => client.getChainId()),
    // viem caches the block number for its polling interval; confirmations need the current one.
    blockNumber: rpc("eth_blockNumber", () => client.getBlockNumber({ cacheTime: 0 })),
    nativeBalance: (address) => rpc("eth_getBalance", () => client.getBalance({ address })),
    call: (request, block) =>
      Effect.tryPromise({
        try: () => client.call({ ...(request.from === undefined ? {} : { account: request.from }), to: request.to, data: request.data, blockTag: block }),
        catch: (e) => e
      }).pipe(
        Effect.map((r) => ({ ok: true as const, data: r.data ?? "0x" })),
        Effect.catchAll((e) =>
          isTransportError(e)
            ? Effect.fail(new EvmRpcError({ chain, method: "eth_call", message: errorMessage(e) }))
            : Effect.succeed({ ok: false as const, reason: rejectionReason(e) }))
      ),
    prepare: (request) =>
      Effect.all(
        {
          nonce: rpc("eth_getTransactionCount", () => client.getTransactionCount({ address: request.from, blockTag: "pending" })),
          gas: judged("eth_estimateGas", () =>
            client.estimateGas({ account: request.from, to: request.to, data: request.data, ...(request.value === undefined ? {} : { value: request.value }), blockTag: "pending" })),
          fees: rpc("eth_feeHistory", () => client.estimateFeesPerGas({ type: "eip1559" }))
        },
        { concurrency: "unbounded" }
      ).pipe(Effect.map(({ fees, gas, nonce }) => ({ nonce, gas, maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas }))),
    sendRaw: (raw) => judged("eth_sendRawTransaction", () => client.sendRawTransaction({ serializedTransaction: raw })),
    txState: (hash) =>
      rpc("eth_getTransactionReceipt", async (): Promise<BackendTxState> => {
        try {
          const r = await client.getTransactionReceipt({ hash })
          return { kind: "mined", blockNumber: r.blockNumber, blockHash: r.blockHash, success: r.status === "success", contractAddress: r.contractAddress ?? undefined }
        } catch (e) {
          if (!(e instanceof TransactionReceiptNotFoundError)) throw e
        }
        try {
          await client.getTransaction({ hash })
          return { kind: "pending" }
        } catch (e) {
          if (e instanceof TransactionNotFoundError) return { kind: "unknown" }
          throw e
        }
      }),
    logs: (filter) =>
      rpc("eth_getLogs", async () => {
        const logs = await client.request({
          method: "eth_getLogs",
          params: [{
            address: filter.address,
            topics: filter.topics.map((t) => (t === null ? null : [...t])),
            fromBlock: numberToHex(filter.fromBlock),
            toBlock: numberToHex(filter.toBlock)
          }]
        })
        return logs.flatMap((l) =>
          // Pending logs have no block yet; a scan only reads mined blocks.
          l.blockNumber === null || l.blockHash === null || l.transactionHash === null || l.logIndex === null
            ? []
            : [{
              address: l.address as Address,
              topics: l.topics as ReadonlyArray<Hex>,
              data: l.data,
              blockNumber: hexToBigInt(l.blockNumber),
              blockHash: l.blockHash as Hash,
              transactionHash: l.transactionHash as Hash,
              logIndex: hexToNumber(l.logIndex)
            }]
        )
      }),
    // Every block is read whole (no index of native payments exists on a plain node); only the
    // candidates' receipts are asked for, since a reverted call to a contract moves nothing.
    nativeTransfers: (fromBlock, toBlock, to) =>
      rpc("eth_getBlockByNumber", async () => {
        const wanted = new Set(to.map((a) => a.toLowerCase()))
        const out: Array<NativeTransfer> = []
        for (let n = fromBlock; n <= toBlock; n++) {
          const block = await client.getBlock({ blockNumber: n, includeTransactions: true })
          for (const tx of paying(block.transactions.map((t) => ({ hash: t.hash, from: t.from, to: t.to, value: t.value })), wanted)) {
            const receipt = await client.getTransactionReceipt({ hash: tx.hash })
            if (receipt.status === "success") out.push({ txHash: tx.hash, from: tx.from, to: tx.to!, value: tx.value, blockNumber: n })
          }
        }
        return out
      }),
    mine: (blocks) =>
      testClient === undefined
        ? Effect.fail(new EvmUnsupported({ chain, operation: "mine (the node is not a devnet; set devRpc: \"anvil\")" }))
        : rpc("anvil_mine", () => testClient.mine({ blocks }))
  }
}

/** A ledger on the node at `rpcUrl`, after checking that the node serves this chain's id. */
export const makeViemLedger = (options: ViemLedgerOptions): Effect.Effect<EvmLedger, EvmInvalidInput | EvmRpcError | EvmChainMismatch> =>
  Effect.gen(function*() {
    const account = yield* hotWalletAccount(options.hotWalletKey)
    const backend = viemBackend(options)
    const actual = yield* backend.chainId
    const expected = evmChains[options.chain].chainId
    if (actual !== expected) return yield* new EvmChainMismatch({ chain: options.chain, expected, actual })
    return yield* makeLedger({
      chain: options.chain,
      backend,
      account,
      ...(options.scanBlocksMax === undefined ? {} : { scanBlocksMax: options.scanBlocksMax })
    })
  })

export interface ViemLayerOptions {
  readonly hotWalletKey: Redacted.Redacted<string>
  /** One RPC URL per chain the app runs with. */
  readonly rpcUrls: Partial<Readonly<Record<EvmChain, string>>>
  readonly devRpc?: "anvil"
  readonly rpcTimeoutMs?: number
}

/** `EvmLedgers` over real nodes (or anvil), one per configured chain. */
export const layerViem = (options: ViemLayerOptions): Layer.Layer<EvmLedgers, EvmInvalidInput | EvmRpcError | EvmChainMismatch> =>
  Layer.effect(
    EvmLedgers,
    Effect.map(
      Effect.forEach((Object.entries(options.rpcUrls) as Array<[EvmChain, string | undefined]>).flatMap(([c, u]) => (u === undefined ? [] : [[c, u] as const])), ([chain, rpcUrl]) =>
        makeViemLedger({
          chain,
          rpcUrl,
          hotWalletKey: options.hotWalletKey,
          ...(options.devRpc === undefined ? {} : { devRpc: options.devRpc }),
          ...(options.rpcTimeoutMs === undefined ? {} : { rpcTimeoutMs: options.rpcTimeoutMs })
        })),
      ledgersOf
    )
  )
