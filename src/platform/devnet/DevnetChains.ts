// What the devnet commands do to a chain: pay as a customer's wallet, mine, read a balance. The
// payer is the devnet's own funded wallet: the ledger faucet (devnetFaucet.ts) for native coin
// and Omni sends, the EVM hot wallet for ERC-20s (it holds the devnet tokens' supply). Paying and
// mining refuse on a real node; reading a balance works on both (the CLI builds this service
// over real nodes itself, and reaches the node's devnets through the Devnet entity).
import { Context, Effect, Either, Layer } from "effect"
import { validateLedgerAddress } from "../../chain/address.ts"
import { type EvmLedger, EvmLedgers } from "../../chain/evm/EvmLedger.ts"
import { devnetFaucet } from "../../chain/ledger/devnetFaucet.ts"
import { syncOnce } from "../../chain/ledger/follower.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { OmniIndexer } from "../../chain/omni/indexer.ts"
import { formatAmount, parseAmount } from "../../chain/units.ts"
import { DevnetRefused, type DevnetChainName } from "../../../schemas/devnet.ts"
import { AppConfig } from "../Config.ts"
import { realNodeRefusal, realNodeSetting } from "./realNode.ts"
import { ledgerNative, resolveEvmAsset, resolveLedgerAsset, type EvmAsset, type LedgerAsset } from "./assets.ts"

export interface DevnetChainsShape {
  /** Pays `amount` (decimal, the asset's own unit) to `to`; the txid. */
  readonly pay: (chain: DevnetChainName, to: string, amount: string, asset: string | undefined) => Effect.Effect<string, DevnetRefused>
  /** Mines `blocks` blocks now; the new height. */
  readonly mine: (chain: DevnetChainName, blocks: number) => Effect.Effect<number, DevnetRefused>
  /** The confirmed balance, as a decimal in the asset's own unit. */
  readonly balance: (chain: DevnetChainName, address: string, asset: string | undefined) => Effect.Effect<string, DevnetRefused>
}

export class DevnetChains extends Context.Tag("shardline/DevnetChains")<DevnetChains, DevnetChainsShape>() {}

/** One line for a person from any error the chain ports raise (they all carry their words in a field). */
const describe = (e: { readonly _tag: string }): string => {
  const fields = e as unknown as Record<string, unknown>
  const words = [fields["message"], fields["reason"]].find((w): w is string => typeof w === "string" && w !== "")
  return (words ?? e._tag).replace(/\s*\n\s*/g, " ")
}

const refuse = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, DevnetRefused, R> =>
  Effect.mapError(effect, (e) => (e instanceof DevnetRefused ? e : new DevnetRefused({ message: describe(e) })))

const fromResult = <A>(r: Either.Either<A, { readonly message: string }>): Effect.Effect<A, DevnetRefused> =>
  Either.isRight(r) ? Effect.succeed(r.right) : Effect.fail(new DevnetRefused({ message: r.left.message }))

export const make = Effect.gen(function*() {
  const config = yield* AppConfig
  const utxo = yield* UtxoLedger
  const evm = yield* EvmLedgers
  const faucet = devnetFaucet(utxo)
  // Omni balances come from our own indexer (no omnicored): kept across calls, synced before each read.
  const indexer = new OmniIndexer({ params: utxo.params })
  const omniLock = yield* Effect.makeSemaphore(1)
  const synced = omniLock.withPermits(1)(Effect.gen(function*() {
    const report = yield* refuse(syncOnce(utxo, indexer))
    if (!report.caughtUp) return yield* new DevnetRefused({ message: "the Omni indexer has not caught up with the ledger yet; ask again" })
    return indexer
  }))

  const devnetOnly = (command: string, chain: DevnetChainName) => {
    const setting = realNodeSetting(config, chain)
    return setting === undefined ? Effect.void : Effect.fail(realNodeRefusal(command, chain, setting))
  }

  const ledgerAsset = (asset: string | undefined) =>
    Effect.gen(function*() {
      const resolved: LedgerAsset = yield* fromResult(resolveLedgerAsset(asset))
      if (resolved.kind === "native") return { asset: resolved, decimals: ledgerNative.decimals }
      const property = (yield* synced).property(resolved.property)
      if (property === undefined) return yield* new DevnetRefused({ message: `no Omni property ${resolved.property} on the ledger` })
      return { asset: resolved, decimals: property.divisible ? 8 : 0 }
    })

  const evmLedger = (chain: Exclude<DevnetChainName, "ledger">) => refuse(evm.get(chain))

  const evmToken = (ledger: EvmLedger, asset: string | undefined, command: string) =>
    Effect.gen(function*() {
      const devnet = realNodeSetting(config, ledger.chain) === undefined
      const resolved: EvmAsset = yield* fromResult(resolveEvmAsset(ledger.chain, asset, devnet ? ledger.hotWallet : undefined))
      if (resolved.kind === "native") {
        return yield* new DevnetRefused({ message: `devnet ${command} of ${ledger.chain}'s native coin is not supported yet; use --asset USDC, USDT, PYUSD or DAI` })
      }
      const decimals = yield* refuse(ledger.tokenDecimals(resolved.address))
      return { token: resolved.address, decimals }
    })

  const pay: DevnetChainsShape["pay"] = (chain, to, amount, asset) =>
    Effect.gen(function*() {
      yield* devnetOnly("pay", chain)
      if (chain === "ledger") {
        const { asset: resolved, decimals } = yield* ledgerAsset(asset)
        const base = yield* fromResult(parseAmount(amount, decimals))
        if (resolved.kind === "native") return yield* refuse(faucet.pay(to, base))
        const held = (yield* synced).balance(faucet.address, resolved.property)
        if (held < base) {
          const shown = formatAmount(held, decimals)
          return yield* new DevnetRefused({ message: `the devnet faucet holds ${Either.isRight(shown) ? shown.right : held} of property ${resolved.property}, less than ${amount}` })
        }
        return yield* refuse(faucet.omni({ type: "simpleSend", property: resolved.property, amount: base }, to))
      }
      const ledger = yield* evmLedger(chain)
      const { decimals, token } = yield* evmToken(ledger, asset, "pay")
      const base = yield* fromResult(parseAmount(amount, decimals))
      return yield* refuse(ledger.erc20Transfer(token, to, base))
    })

  const mine: DevnetChainsShape["mine"] = (chain, blocks) =>
    Effect.gen(function*() {
      yield* devnetOnly("mine", chain)
      if (chain === "ledger") {
        yield* refuse(utxo.mine(blocks, faucet.address))
        return (yield* refuse(utxo.tip)).height
      }
      const ledger = yield* evmLedger(chain)
      yield* refuse(ledger.mine(blocks))
      return Number(yield* refuse(ledger.blockNumber))
    })

  const balance: DevnetChainsShape["balance"] = (chain, address, asset) =>
    Effect.gen(function*() {
      if (chain === "ledger") {
        const check = validateLedgerAddress(address, utxo.params)
        if (!check.valid) return yield* new DevnetRefused({ message: `address ${address}: ${check.error}` })
        const { asset: resolved, decimals } = yield* ledgerAsset(asset)
        const base = resolved.kind === "native"
          ? (yield* refuse(utxo.listUnspent([address]))).reduce((n, u) => n + u.value, 0n)
          : (yield* synced).balance(address, resolved.property)
        return yield* fromResult(formatAmount(base, decimals))
      }
      const ledger = yield* evmLedger(chain)
      const { decimals, token } = yield* evmToken(ledger, asset, "balance")
      return yield* fromResult(formatAmount(yield* refuse(ledger.tokenBalance(token, address)), decimals))
    })

  return DevnetChains.of({ pay, mine, balance })
})

export const layer: Layer.Layer<DevnetChains, never, AppConfig | UtxoLedger | EvmLedgers> = Layer.effect(DevnetChains, make)
