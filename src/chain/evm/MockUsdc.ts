// The MockUSDC artifact (compiled by contracts/compile.ts, committed) and the two things only a
// devnet or a test does with it: deploy and mint. Runtime code never needs solc.
import { Effect } from "effect"
import { encodeDeployData, encodeFunctionData, type Abi, type Address, type Hex } from "viem"
import artifact from "./contracts/MockUSDC.json" with { type: "json" }
import { EvmTxFailed, type EvmLedger } from "./EvmLedger.ts"

/** JSON imports widen literals; the artifact is solc's ABI, which is what viem's `Abi` describes. */
export const mockUsdcAbi = artifact.abi as Abi
export const mockUsdcBytecode = artifact.bytecode as Hex

export interface TokenSpec {
  readonly name: string
  readonly symbol: string
  readonly decimals: number
}

/** Sends a transaction and waits until it is mined: mines a block itself if the chain does not. */
const mined = (ledger: EvmLedger, request: { readonly to?: string; readonly data: Hex }) =>
  Effect.gen(function*() {
    const hash = yield* ledger.sendTransaction(request)
    let status = yield* ledger.txStatus(hash)
    if (status.kind === "pending") {
      yield* ledger.mine(1)
      status = yield* ledger.txStatus(hash)
    }
    if (status.kind === "pending") {
      return yield* new EvmTxFailed({ chain: ledger.chain, hash, reason: "still pending after mining a block" })
    }
    return status
  })

/** Deploys a MockUSDC owned by the ledger's hot wallet; returns its address. */
export const deployMockUsdc = (ledger: EvmLedger, spec: TokenSpec) =>
  Effect.gen(function*() {
    const data = encodeDeployData({ abi: mockUsdcAbi, bytecode: mockUsdcBytecode, args: [spec.name, spec.symbol, spec.decimals] })
    const status = yield* mined(ledger, { data })
    if (status.contractAddress === undefined) {
      return yield* Effect.dieMessage("a mined deployment has no contract address")
    }
    return status.contractAddress
  })

/** Mints `amount` (smallest unit) to `to`; only the deployer (the hot wallet) may. */
export const mintMockUsdc = (ledger: EvmLedger, token: Address, to: Address, amount: bigint) =>
  Effect.asVoid(mined(ledger, { to: token, data: encodeFunctionData({ abi: mockUsdcAbi, functionName: "mint", args: [to, amount] }) }))
