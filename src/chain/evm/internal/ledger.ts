// The EvmLedger port over any backend: validation, the balance check before a payout, local
// signing with viem, the hash invariant, confirmations and scan cursors. Shared by the devnet
// and the viem adapter so both follow exactly the same rules.
import { Effect } from "effect"
import {
  decodeErrorResult,
  decodeEventLog,
  decodeFunctionResult,
  encodeFunctionData,
  erc20Abi,
  keccak256,
  pad,
  toEventSelector,
  type Address,
  type Hex
} from "viem"
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts"
import { evmChains, type EvmChain } from "../chains.ts"
import {
  EvmCallFailed,
  EvmInsufficientTokenBalance,
  EvmInvalidInput,
  evmLimits,
  EvmTxFailed,
  EvmTxNotFound,
  type EvmLedger,
  type SignedEvmTx,
  type EvmTxStatus,
  type TransferLog,
  type TransferScan
} from "../EvmLedger.ts"
import { mockUsdcAbi } from "../MockUsdc.ts"
import { nativeScanBlocksMax } from "../nativeTransfers.ts"
import type { NonceGuard } from "../nonceGuard.ts"
import type { EvmBackend, RawLog, TxFields } from "./backend.ts"
import { parseAddress, parseAddressList, parseAmount, parseBlock, parseHash, parseMineCount, parseRecipient } from "./input.ts"
import { broadcastSpan } from "../../broadcastSpan.ts"

export const transferTopic = toEventSelector("Transfer(address,address,uint256)")

const addressTopic = (a: Address): Hex => pad(a.toLowerCase() as Hex, { size: 32 })

/** A readable reason from revert data: our token's custom errors, Error(string), Panic(uint256). */
export const revertReason = (data: Hex): string => {
  if (data === "0x") return "reverted without a reason"
  try {
    const decoded = decodeErrorResult({ abi: mockUsdcAbi, data })
    return `${decoded.errorName}(${(decoded.args ?? []).map(String).join(", ")})`
  } catch {
    return `reverted with data ${data.slice(0, 138)}`
  }
}

const decodeTransfer = (log: RawLog): TransferLog | undefined => {
  try {
    const { args } = decodeEventLog({ abi: erc20Abi, eventName: "Transfer", topics: [...log.topics] as [Hex, ...Hex[]], data: log.data })
    return {
      token: log.address,
      from: args.from,
      to: args.to,
      value: args.value,
      blockNumber: log.blockNumber,
      blockHash: log.blockHash,
      txHash: log.transactionHash,
      logIndex: log.logIndex
    }
  } catch {
    // Same topic, other shape (an ERC-721 Transfer has the id indexed): not a token transfer.
    return undefined
  }
}

/** The max fee per gas lowered so gas × max fee fits `budget` wei (the priority fee never above it). */
export const feesWithin = (fields: TxFields, budget: bigint | undefined): Pick<TxFields, "maxFeePerGas" | "maxPriorityFeePerGas"> => {
  if (budget === undefined || fields.gas * fields.maxFeePerGas <= budget) return { maxFeePerGas: fields.maxFeePerGas, maxPriorityFeePerGas: fields.maxPriorityFeePerGas }
  const maxFeePerGas = budget / fields.gas
  return { maxFeePerGas, maxPriorityFeePerGas: fields.maxPriorityFeePerGas < maxFeePerGas ? fields.maxPriorityFeePerGas : maxFeePerGas }
}

const signerAccount = (key: Uint8Array) =>
  Effect.try({
    try: () => privateKeyToAccount(`0x${Buffer.from(key).toString("hex")}`),
    catch: () => new EvmInvalidInput({ field: "signerKey", value: "<redacted>", message: "not a valid secp256k1 private key" })
  })

export interface LedgerOptions {
  readonly chain: EvmChain
  readonly backend: EvmBackend
  readonly account: PrivateKeyAccount
  /** Default `evmLimits.scanBlocksMax`; set it to the provider's eth_getLogs range limit. */
  readonly scanBlocksMax?: bigint
}

export const makeLedger = ({ account, backend, chain, scanBlocksMax = evmLimits.scanBlocksMax }: LedgerOptions): Effect.Effect<EvmLedger> =>
  Effect.gen(function*() {
    const chainId = evmChains[chain].chainId
    const hotWallet = account.address
    // One send at a time per hot wallet: the pending nonce is read, used and sent as one step.
    const sendLock = yield* Effect.makeSemaphore(1)

    const readCall = <A>(to: Address, fn: string, data: Hex, decode: (out: Hex) => A, block: "latest" | "pending" = "latest") =>
      Effect.flatMap(backend.call({ from: hotWallet, to, data }, block), (result) => {
        if (!result.ok) return Effect.fail(new EvmCallFailed({ chain, to, function: fn, reason: result.reason }))
        return Effect.try({
          try: () => decode(result.data),
          catch: () =>
            new EvmCallFailed({
              chain,
              to,
              function: fn,
              reason: result.data === "0x" ? "empty answer: no contract at this address?" : `undecodable answer ${result.data.slice(0, 74)}`
            })
        })
      })

    const balanceOf = (token: Address, holder: Address, block: "latest" | "pending") =>
      readCall(token, "balanceOf", encodeFunctionData({ abi: erc20Abi, functionName: "balanceOf", args: [holder] }), (data) =>
        decodeFunctionResult({ abi: erc20Abi, functionName: "balanceOf", data }), block)

    /** Sends signed bytes; a node that names another hash than keccak(signed bytes) is not the chain we think. */
    const sendRaw = (raw: Hex) => {
      const own = keccak256(raw)
      return Effect.flatMap(backend.sendRaw(raw), (hash) =>
        hash.toLowerCase() !== own
          ? Effect.dieMessage(`node returned hash ${hash} for a transaction whose hash is ${own}`)
          : Effect.succeed(own)).pipe(broadcastSpan(chain))
    }

    /**
     * Prepare, sign, (record,) send as one step under the lock; `check` runs first, under the same
     * lock; `record` gets the signed bytes before they are sent. With a `guard`, the nonce choice,
     * signing and record also run inside its cross-process step, and the nonce is the guard's.
     */
    const send = <E, R = never>(
      to: Address | undefined,
      data: Hex,
      check: Effect.Effect<void, E>,
      record?: (signed: SignedEvmTx) => Effect.Effect<void, R>,
      guard?: NonceGuard<R>,
      options: { readonly signer?: PrivateKeyAccount; readonly value?: bigint; readonly feeBudgetWei?: bigint } = {}
    ) => {
      const signer = options.signer ?? account
      const value = options.value ?? 0n
      const signAndRecord = Effect.gen(function*() {
        const prepared = yield* backend.prepare({ from: signer.address, to, data, ...(value === 0n ? {} : { value }) })
        const nonce = guard === undefined ? prepared.nonce : yield* guard.nonce(signer.address, prepared.nonce)
        const fields = { ...prepared, nonce, ...feesWithin(prepared, options.feeBudgetWei) }
        const raw = yield* Effect.promise(() => signer.signTransaction({ chainId, type: "eip1559", to, data, value, ...fields }))
        if (record !== undefined) yield* record({ hash: keccak256(raw), raw, nonce, from: signer.address })
        return raw
      })
      const step = Effect.gen(function*() {
        yield* check
        const raw = yield* (guard === undefined ? signAndRecord : guard.serialize(signer.address, signAndRecord))
        return yield* sendRaw(raw)
      })
      // The hot wallet's sends in this process go one at a time; another signer has only its guard.
      return signer === account ? sendLock.withPermits(1)(step) : step
    }

    const sendTransaction: EvmLedger["sendTransaction"] = (request) =>
      Effect.flatMap(request.to === undefined ? Effect.succeed(undefined) : parseAddress("to", request.to), (to) =>
        send(to, request.data, Effect.void))

    const txStatus: EvmLedger["txStatus"] = (input) =>
      Effect.gen(function*() {
        const hash = yield* parseHash("hash", input)
        const state = yield* backend.txState(hash)
        switch (state.kind) {
          case "unknown":
            return yield* new EvmTxNotFound({ chain, hash })
          case "dropped":
            return yield* new EvmTxFailed({ chain, hash, reason: `dropped: ${state.reason}` })
          case "pending":
            return { kind: "pending" } satisfies EvmTxStatus
          case "mined": {
            if (!state.success) return yield* new EvmTxFailed({ chain, hash, reason: "reverted", blockNumber: state.blockNumber })
            const head = yield* backend.blockNumber
            // A load-balanced provider may answer the head from a node one block behind.
            const confirmations = head >= state.blockNumber ? Number(head - state.blockNumber) + 1 : 1
            return { kind: "mined", blockNumber: state.blockNumber, blockHash: state.blockHash, confirmations, contractAddress: state.contractAddress } satisfies EvmTxStatus
          }
        }
      })

    const transfer = <R = never>(tokenInput: string, toInput: string, amountInput: bigint, record?: (signed: SignedEvmTx) => Effect.Effect<void, R>, guard?: NonceGuard<R>) =>
      Effect.gen(function*() {
        const token = yield* parseAddress("token", tokenInput)
        const to = yield* parseRecipient("to", toInput)
        const amount = yield* parseAmount("amount", amountInput)
        // Pending: payouts sent but not yet mined have already spent their share.
        const covered = Effect.flatMap(balanceOf(token, hotWallet, "pending"), (balance) =>
          balance < amount ? Effect.fail(new EvmInsufficientTokenBalance({ chain, token, holder: hotWallet, balance, amount })) : Effect.void)
        return yield* send(token, encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to, amount] }), covered, record, guard)
      })

    const ledger: EvmLedger = {
      chain,
      hotWallet,
      scanBlocksMax,
      chainId: backend.chainId,
      blockNumber: backend.blockNumber,

      tokenDecimals: (tokenInput) =>
        Effect.flatMap(parseAddress("token", tokenInput), (token) =>
          readCall(token, "decimals", encodeFunctionData({ abi: erc20Abi, functionName: "decimals" }), (data) =>
            decodeFunctionResult({ abi: erc20Abi, functionName: "decimals", data }))),

      nativeBalance: (holderInput) => Effect.flatMap(parseAddress("holder", holderInput), backend.nativeBalance),

      tokenBalance: (tokenInput, holderInput) =>
        Effect.gen(function*() {
          const token = yield* parseAddress("token", tokenInput)
          const holder = yield* parseAddress("holder", holderInput)
          return yield* balanceOf(token, holder, "latest")
        }),

      erc20Transfer: (tokenInput, toInput, amountInput) => transfer(tokenInput, toInput, amountInput),
      erc20TransferRecorded: (tokenInput, toInput, amountInput, record, guard) => transfer(tokenInput, toInput, amountInput, record, guard),
      estimateSend: (request) =>
        Effect.gen(function*() {
          const from = yield* parseAddress("from", request.from)
          const to = yield* parseAddress("to", request.to)
          const fields = yield* backend.prepare({ from, to, data: request.data ?? "0x" })
          return { gas: fields.gas, maxFeePerGas: fields.maxFeePerGas }
        }),
      sendRecorded: (request, record, guard) =>
        Effect.gen(function*() {
          const to = yield* parseRecipient("to", request.to)
          const value = request.value ?? 0n
          if (value < 0n) return yield* new EvmInvalidInput({ field: "value", value: String(value), message: "expected wei >= 0" })
          const signer = request.signerKey === undefined ? undefined : yield* signerAccount(request.signerKey)
          return yield* send(to, request.data ?? "0x", Effect.void, record, guard, {
            value,
            ...(signer === undefined ? {} : { signer }),
            ...(request.feeBudgetWei === undefined ? {} : { feeBudgetWei: request.feeBudgetWei })
          })
        }),

      nativeTransfer: (toInput, amountInput, record, guard) =>
        Effect.gen(function*() {
          const to = yield* parseRecipient("to", toInput)
          const amount = yield* parseAmount("amount", amountInput)
          // The value must be there at the head; what gas and sends still pending leave short the node refuses (EvmTxRejected).
          const covered = Effect.flatMap(backend.nativeBalance(hotWallet), (balance) =>
            balance < amount ? Effect.fail(new EvmInsufficientTokenBalance({ chain, token: "native", holder: hotWallet, balance, amount })) : Effect.void)
          return yield* send(to, "0x", covered, record, guard, { value: amount })
        }),

      nativeTransfers: (fromInput, toInput, recipients) =>
        Effect.gen(function*() {
          const fromBlock = yield* parseBlock("fromBlock", fromInput)
          const toBlock = yield* parseBlock("toBlock", toInput)
          const to = yield* parseAddressList("to", recipients)
          const head = yield* backend.blockNumber
          const last = [toBlock, head, fromBlock + nativeScanBlocksMax - 1n].reduce((a, b) => (b < a ? b : a))
          if (last < fromBlock || to === undefined) return { transfers: [], nextBlock: fromBlock }
          return { transfers: yield* backend.nativeTransfers(fromBlock, last, to), nextBlock: last + 1n }
        }),
      sendRaw,

      confirmations: (hash) => Effect.map(txStatus(hash), (s) => (s.kind === "pending" ? 0 : s.confirmations)),
      txStatus,

      transfers: (tokenInput, fromInput, toInput, filter = {}) =>
        Effect.gen(function*() {
          const token = yield* parseAddress("token", tokenInput)
          const fromBlock = yield* parseBlock("fromBlock", fromInput)
          const toBlock = yield* parseBlock("toBlock", toInput)
          if (toBlock < fromBlock) {
            return yield* new EvmInvalidInput({ field: "toBlock", value: String(toBlock), message: `must not be below fromBlock ${fromBlock}` })
          }
          const senders = yield* parseAddressList("filter.from", filter.from)
          const recipients = yield* parseAddressList("filter.to", filter.to)
          const head = yield* backend.blockNumber
          const capped = fromBlock + scanBlocksMax - 1n
          const last = [toBlock, head, capped].reduce((a, b) => (b < a ? b : a))
          if (last < fromBlock) return { logs: [], fromBlock, toBlock: fromBlock - 1n, nextBlock: fromBlock } satisfies TransferScan
          const raw = yield* backend.logs({
            address: token,
            topics: [[transferTopic], senders?.map(addressTopic) ?? null, recipients?.map(addressTopic) ?? null],
            fromBlock,
            toBlock: last
          })
          const logs = raw
            .map(decodeTransfer)
            .filter((l): l is TransferLog => l !== undefined)
            .sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1))
          return { logs, fromBlock, toBlock: last, nextBlock: last + 1n } satisfies TransferScan
        }),

      sendTransaction,
      mine: (blocks) => Effect.flatMap(parseMineCount(blocks), backend.mine)
    }
    return ledger
  })
