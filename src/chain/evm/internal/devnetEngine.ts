// The in-process EVM chain behind the devnet ledger: @ethereumjs/vm executes real signed
// transactions (real bytecode, real gas, real receipts) into blocks we mine on demand. It speaks
// plain values and Eithers, no Effect services; `devnet.ts` puts the port around it.
//
// One operation at a time: ethereumjs keeps one mutable state (journal checkpoints while a block
// is built), so a read must never interleave with mining. Every public method runs through
// `serial`.
import { createCustomCommon, Hardfork, Mainnet, type Common } from "@ethereumjs/common"
import { createTxFromRLP, type TypedTransaction } from "@ethereumjs/tx"
import { Account, bytesToHex, createAddressFromString, hexToBytes, type PrefixedHexString } from "@ethereumjs/util"
import { buildBlock, createVM, runTx, type VM } from "@ethereumjs/vm"
import { keccak256, type Address, type Hash } from "viem"
import { Data, Either } from "effect"
import type { NativeTransfer } from "../nativeTransfers.ts"
import type { BackendTxState, LogFilter, RawLog } from "./backend.ts"

type Hex = `0x${string}`
/** The block type @ethereumjs/vm builds; named through its API so we need no direct dependency on @ethereumjs/block. */
type Block = Parameters<typeof buildBlock>[1]["parentBlock"]

/** Limits, each with its unit. */
export const devnetLimits = {
  /** Transactions waiting for a block; beyond this a submit is refused. */
  mempoolTxsMax: 4_096,
  /**
   * Transactions per block. ethereumjs's BlockBuilder re-creates every earlier transaction of the
   * block on each add (quadratic), so big blocks get slow; the rest wait for the next block.
   */
  blockTxsMax: 32,
  /** Gas per block (Ethereum mainnet's 30M). */
  blockGasLimit: 30_000_000n,
  /** Largest raw transaction accepted, bytes (geth's txMaxSize). */
  rawTxBytesMax: 131_072,
  /** Blocks one mine() call may produce. */
  mineBlocksMax: 10_000,
  /** Gas given to an eth_call or an estimate. */
  callGasLimit: 10_000_000n
} as const

export interface DevnetOptions {
  readonly chainId: number
  /** Accounts funded with native coin at genesis (wei). */
  readonly prefund: ReadonlyArray<{ readonly address: Hex; readonly wei: bigint }>
  /** Seconds; fixed so block hashes are reproducible. */
  readonly genesisTimestamp: number
  /** Seconds between consecutive block timestamps (12 ethereum, 2 base, 3 bsc). */
  readonly blockTimeSeconds: number
}

/** A call the EVM refused or reverted; `revertData` is the revert payload, "0x" when there is none. */
export class EvmCallFailed extends Data.TaggedError("EvmCallFailed")<{ readonly message: string; readonly revertData: Hex }> {}

/** A transaction or mine request the devnet refuses, worded as a node would. */
export class EvmDevnetRefused extends Data.TaggedError("EvmDevnetRefused")<{ readonly message: string }> {}

const refused = (message: string) => Either.left(new EvmDevnetRefused({ message }))

/** Gas to offer. */
export type EstimateOutcome = Either.Either<bigint, EvmCallFailed>

/** Intrinsic gas under Cancun rules: base, calldata (EIP-2028), creation and initcode words (EIP-3860). */
const intrinsicGas = (to: Hex | undefined, data: Uint8Array): bigint => {
  let gas = 21_000n
  for (const byte of data) gas += byte === 0 ? 4n : 16n
  if (to === undefined) gas += 32_000n + 2n * BigInt(Math.ceil(data.length / 32))
  return gas
}

export type CallOutcome = Either.Either<{ readonly data: Hex; readonly gasUsed: bigint }, EvmCallFailed>

/**
 * What the devnet keeps of each block: its hash and its logs. Only the head is kept as a whole
 * Block (the parent of the next one); a whole @ethereumjs Block is about 12 KB even when empty,
 * which on a 1 s clock would grow a node's heap by about 1 GB a day per chain.
 */
interface MinedBlock {
  readonly hash: Hex
  readonly logs: ReadonlyArray<RawLog>
  /** Its successful transactions that carried native coin (few: most carry none), for deposit scans. */
  readonly payments: ReadonlyArray<NativeTransfer>
}

interface Pending {
  readonly hash: Hex
  readonly tx: TypedTransaction
  readonly sender: Hex
}

const lower = (h: string): Hex => h.toLowerCase() as Hex

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/**
 * A block hash as a flat string. bytesToHex concatenates byte by byte, and V8 keeps such a string
 * as a rope of ~27 pieces (~860 bytes); one is kept per block for the node's lifetime.
 */
const storedHex = (bytes: Uint8Array): Hex => `0x${Buffer.from(bytes).toString("hex")}`

export class DevnetEngine {
  private readonly blocks: MinedBlock[] = []
  private headBlock!: Block
  private readonly mempool: Pending[] = []
  private readonly txStates = new Map<Hex, BackendTxState>()
  private readonly pendingNonce = new Map<Hex, bigint>()
  private queue: Promise<unknown> = Promise.resolve()
  /**
   * The head state with the mempool applied, kept up to date per submit so a "pending" read
   * costs one call, not a replay of the mempool. Rebuilt lazily after a block or a faucet write.
   */
  private pendingVm: VM | undefined

  private constructor(
    readonly chainId: number,
    private readonly common: Common,
    private readonly vm: VM,
    private readonly blockTimeSeconds: number
  ) {}

  static async create(options: DevnetOptions): Promise<DevnetEngine> {
    // Cancun: what the MockUSDC artifact targets (PUSH0, MCOPY) and what every chain we pay on runs.
    const common = createCustomCommon({ chainId: options.chainId, name: `devnet-${options.chainId}` }, Mainnet, {
      hardfork: Hardfork.Cancun
    })
    const vm = await createVM({ common })
    for (const { address, wei } of options.prefund) {
      await vm.stateManager.putAccount(createAddressFromString(address), new Account(0n, wei))
    }
    const engine = new DevnetEngine(options.chainId, common, vm, options.blockTimeSeconds)
    // Genesis has no parent: every field buildBlock would read from one is passed explicitly, so
    // the placeholder is never touched (narrow cast at the library edge).
    const noParent = {} as Block
    const builder = await buildBlock(vm, {
      parentBlock: noParent,
      headerData: {
        number: 0n,
        parentHash: new Uint8Array(32),
        timestamp: BigInt(options.genesisTimestamp),
        gasLimit: devnetLimits.blockGasLimit,
        baseFeePerGas: 1_000_000_000n,
        excessBlobGas: 0n
      },
      blockOpts: { putBlockIntoBlockchain: false }
    })
    const { block } = await builder.build()
    engine.headBlock = block
    engine.blocks.push({ hash: storedHex(block.hash()), logs: [], payments: [] })
    return engine
  }

  private serial<A>(f: () => Promise<A>): Promise<A> {
    const run = this.queue.then(f, f)
    this.queue = run.catch(() => undefined)
    return run
  }


  blockNumber(): bigint {
    return this.headBlock.header.number
  }

  /** The base fee the next block will charge (EIP-1559 update rule from the head). */
  nextBaseFee(): bigint {
    return this.headBlock.header.calcNextBaseFee()
  }

  blockHash(n: bigint): Hex | undefined {
    return this.blocks[Number(n)]?.hash
  }

  nonce(address: Hex, tag: "latest" | "pending"): Promise<bigint> {
    return this.serial(async () => {
      const key = lower(address)
      const pending = tag === "pending" ? this.pendingNonce.get(key) : undefined
      if (pending !== undefined) return pending
      const account = await this.vm.stateManager.getAccount(createAddressFromString(key))
      return account?.nonce ?? 0n
    })
  }

  balance(address: Hex): Promise<bigint> {
    return this.serial(async () => {
      const account = await this.vm.stateManager.getAccount(createAddressFromString(address))
      return account?.balance ?? 0n
    })
  }

  /** Sets an account's native balance (a faucet for devnet users); keeps its nonce and code. */
  setBalance(address: Hex, wei: bigint): Promise<void> {
    return this.serial(async () => {
      const at = createAddressFromString(address)
      const account = (await this.vm.stateManager.getAccount(at)) ?? new Account()
      account.balance = wei
      await this.vm.stateManager.putAccount(at, account)
      this.pendingVm = undefined
    })
  }

  /** eth_call against the head state, or on top of the mempool ("pending"); nothing it does is kept. */
  call(request: { readonly from?: Hex; readonly to: Hex | undefined; readonly data: Hex }, block: "latest" | "pending"): Promise<CallOutcome> {
    return this.serial(() => this.dryRun(request, block === "pending"))
  }

  /**
   * Gas a transaction would need after the mempool's transactions (as anvil and geth estimate
   * on "pending"), with headroom for refunds and the 63/64 rule.
   */
  estimateGas(request: { readonly from: Hex; readonly to: Hex | undefined; readonly data: Hex; readonly value?: bigint }): Promise<EstimateOutcome> {
    return this.serial(async () => {
      const outcome = await this.dryRun(request, true)
      return Either.map(outcome, ({ gasUsed }) => {
        const gas = ((intrinsicGas(request.to, hexToBytes(request.data)) + gasUsed) * 5n) / 4n
        return gas < devnetLimits.blockGasLimit ? gas : devnetLimits.blockGasLimit
      })
    })
  }

  /** Applies a mempool transaction as mining would; one mining would drop is skipped here too. */
  private applyPending(vm: VM, tx: TypedTransaction): Promise<unknown> {
    return runTx(vm, { tx, block: this.headBlock, skipHardForkValidation: true, skipBlockGasLimitValidation: true }).catch(() => undefined)
  }

  private async pendingView(): Promise<VM> {
    if (this.pendingVm === undefined) {
      const vm = await this.vm.shallowCopy()
      for (const p of this.mempool) await this.applyPending(vm, p.tx)
      this.pendingVm = vm
    }
    return this.pendingVm
  }

  private async dryRun(request: { readonly from?: Hex; readonly to: Hex | undefined; readonly data: Hex; readonly value?: bigint }, onPending: boolean): Promise<CallOutcome> {
    const vm = onPending && this.mempool.length > 0 ? await this.pendingView() : this.vm
    const journal = vm.evm.journal
    await journal.checkpoint()
    try {
      const result = await vm.evm.runCall({
        caller: createAddressFromString(request.from ?? "0x0000000000000000000000000000000000000000"),
        ...(request.to === undefined ? {} : { to: createAddressFromString(request.to) }),
        data: hexToBytes(request.data),
        ...(request.value === undefined ? {} : { value: request.value }),
        gasLimit: devnetLimits.callGasLimit,
        block: this.headBlock
      })
      const out = bytesToHex(result.execResult.returnValue)
      const error = result.execResult.exceptionError
      return error === undefined
        ? Either.right({ data: out, gasUsed: result.execResult.executionGasUsed })
        : Either.left(new EvmCallFailed({ message: error.error, revertData: out }))
    } catch (e) {
      return Either.left(new EvmCallFailed({ message: message(e), revertData: "0x" }))
    } finally {
      await journal.revert()
    }
  }

  /** eth_sendRawTransaction: checks it as a node's mempool would, then queues it for the next block. */
  submit(raw: Hex): Promise<Either.Either<Hex, EvmDevnetRefused>> {
    return this.serial(async () => {
      const bytes = hexToBytes(raw as PrefixedHexString)
      if (bytes.length > devnetLimits.rawTxBytesMax) return refused(`transaction too large: ${bytes.length} bytes`)
      if (this.mempool.length >= devnetLimits.mempoolTxsMax) return refused("mempool full")
      let tx: TypedTransaction
      let sender: Hex
      try {
        // Decoding checks the chain id against ours and the signature's shape; the sender recovery checks the signature.
        tx = createTxFromRLP(bytes, { common: this.common })
        sender = lower(tx.getSenderAddress().toString())
      } catch (e) {
        return refused(`invalid transaction: ${message(e)}`)
      }
      const hash = keccak256(raw)
      if (bytesToHex(tx.hash()) !== hash) return refused("transaction hash does not match its bytes")
      if (this.txStates.has(hash)) return refused("already known")
      const account = await this.vm.stateManager.getAccount(tx.getSenderAddress())
      const expected = this.pendingNonce.get(sender) ?? account?.nonce ?? 0n
      if (tx.nonce < expected) return refused(`nonce too low: next nonce ${expected}, tx nonce ${tx.nonce}`)
      // No queue for future nonces: a gap would stall the hot wallet silently, so refuse it loudly.
      if (tx.nonce > expected) return refused(`nonce too high: next nonce ${expected}, tx nonce ${tx.nonce}`)
      if (tx.gasLimit > devnetLimits.blockGasLimit) return refused("exceeds block gas limit")
      const baseFee = this.headBlock.header.calcNextBaseFee()
      const maxFee = "maxFeePerGas" in tx ? tx.maxFeePerGas : tx.gasPrice
      if (maxFee < baseFee) return refused(`max fee per gas ${maxFee} below base fee ${baseFee}`)
      const cost = tx.gasLimit * maxFee + tx.value
      const balance = account?.balance ?? 0n
      if (balance < cost) return refused(`insufficient funds for gas * price + value: balance ${balance}, cost ${cost}`)
      this.mempool.push({ hash, tx, sender })
      if (this.pendingVm !== undefined) await this.applyPending(this.pendingVm, tx)
      this.pendingNonce.set(sender, tx.nonce + 1n)
      this.txStates.set(hash, { kind: "pending" })
      return Either.right(hash)
    })
  }

  pendingCount(): number {
    return this.mempool.length
  }

  /** Mines `n` blocks; the first takes pending transactions in arrival order while gas allows. */
  mine(n: number): Promise<Either.Either<bigint, EvmDevnetRefused>> {
    return this.serial(async () => {
      if (!Number.isInteger(n) || n < 1 || n > devnetLimits.mineBlocksMax) {
        return refused(`blocks to mine must be an integer in 1..${devnetLimits.mineBlocksMax}, got ${n}`)
      }
      for (let i = 0; i < n; i++) await this.mineOne()
      this.pendingVm = undefined
      return Either.right(this.blockNumber())
    })
  }

  private async mineOne(): Promise<void> {
    const parent = this.headBlock
    const builder = await buildBlock(this.vm, {
      parentBlock: parent,
      headerData: {
        timestamp: parent.header.timestamp + BigInt(this.blockTimeSeconds),
        gasLimit: devnetLimits.blockGasLimit
      },
      blockOpts: { putBlockIntoBlockchain: false }
    })
    const included: Array<{ readonly pending: Pending; readonly success: boolean; readonly created: Address | undefined; readonly logs: ReadonlyArray<readonly [Uint8Array, Uint8Array[], Uint8Array]> }> = []
    let gasLeft = devnetLimits.blockGasLimit
    while (this.mempool.length > 0 && this.mempool[0]!.tx.gasLimit <= gasLeft && included.length < devnetLimits.blockTxsMax) {
      const pending = this.mempool.shift()!
      try {
        const result = await builder.addTransaction(pending.tx)
        gasLeft -= result.totalGasSpent
        included.push({
          pending,
          success: result.execResult.exceptionError === undefined,
          created: result.createdAddress === undefined ? undefined : lower(result.createdAddress.toString()),
          logs: result.receipt.logs
        })
      } catch (e) {
        // Valid when submitted, invalid now (e.g. the balance for gas went elsewhere): a node drops it.
        this.txStates.set(pending.hash, { kind: "dropped", reason: message(e) })
        this.resetPendingNonce(pending.sender)
      }
    }
    const { block } = await builder.build()
    // buildBlock leaves its block-level journal entries behind (two per block, each a few Sets and
    // Maps, ~1.3 KB): without a cleanup the heap grows with every block, even an empty one.
    await this.vm.evm.journal.cleanup()
    const blockHash: Hash = storedHex(block.hash())
    const number = block.header.number
    const logs: RawLog[] = []
    for (const tx of included) {
      for (const [address, topics, data] of tx.logs) {
        logs.push({
          address: lower(bytesToHex(address)),
          topics: topics.map((t) => bytesToHex(t)),
          data: bytesToHex(data),
          blockNumber: number,
          blockHash,
          transactionHash: tx.pending.hash,
          logIndex: logs.length
        })
      }
      this.txStates.set(tx.pending.hash, {
        kind: "mined",
        blockNumber: number,
        blockHash,
        success: tx.success,
        contractAddress: tx.created
      })
    }
    for (const tx of included) {
      if (!this.mempool.some((p) => p.sender === tx.pending.sender)) this.pendingNonce.delete(tx.pending.sender)
    }
    const payments: NativeTransfer[] = included.flatMap(({ pending, success }) =>
      success && pending.tx.value > 0n && pending.tx.to !== undefined
        ? [{ txHash: pending.hash, from: pending.sender, to: lower(pending.tx.to.toString()), value: pending.tx.value, blockNumber: number }]
        : [])
    this.headBlock = block
    this.blocks.push({ hash: blockHash, logs, payments })
  }

  /** After a drop, later transactions of the same sender can never be mined: drop them too. */
  private resetPendingNonce(sender: Hex): void {
    for (let i = this.mempool.length - 1; i >= 0; i--) {
      const p = this.mempool[i]!
      if (p.sender === sender) {
        this.mempool.splice(i, 1)
        this.txStates.set(p.hash, { kind: "dropped", reason: "an earlier transaction of the same sender was dropped" })
      }
    }
    this.pendingNonce.delete(sender)
  }

  txState(hash: Hex): BackendTxState {
    return this.txStates.get(lower(hash)) ?? { kind: "unknown" }
  }

  /** Native payments to one of `to` in blocks `fromBlock..toBlock`. */
  nativeTransfers(fromBlock: bigint, toBlock: bigint, to: ReadonlyArray<Hex>): ReadonlyArray<NativeTransfer> {
    const wanted = new Set(to.map(lower))
    const last = toBlock < this.blockNumber() ? toBlock : this.blockNumber()
    const out: NativeTransfer[] = []
    for (let n = fromBlock; n <= last; n++) for (const p of this.blocks[Number(n)]!.payments) if (wanted.has(p.to)) out.push(p)
    return out
  }

  /** eth_getLogs: `topics[i]` is null (any) or a list of alternatives. */
  logs(filter: LogFilter): ReadonlyArray<RawLog> {
    const address = lower(filter.address)
    const wanted = filter.topics.map((t) => (t === null ? null : t.map(lower)))
    const out: RawLog[] = []
    const last = filter.toBlock < this.blockNumber() ? filter.toBlock : this.blockNumber()
    for (let n = filter.fromBlock; n <= last; n++) {
      for (const log of this.blocks[Number(n)]!.logs) {
        if (log.address !== address) continue
        if (wanted.every((alts, i) => alts === null || (log.topics[i] !== undefined && alts.includes(log.topics[i]!)))) out.push(log)
      }
    }
    return out
  }
}
