// What the devnet commands do to a chain: pay as a customer's wallet, mine, read a balance. The
// payer is the devnet's own funded wallet: the ledger faucet (devnetFaucet.ts) for native coin
// and Omni sends, the EVM hot wallet for ERC-20s (it holds the devnet tokens' supply). Paying and
// mining refuse on a real node; reading a balance works on both (the CLI builds this service
// over real nodes itself, and reaches the node's devnets through the Devnet entity).
//
// The registered properties (LedgerRegistry: the exchange's market assets, the desk's tokens):
// `--asset` also takes their codes; their issuers (system wallets) issue them on the devnet
// (propertyIssuer.ts), and the demo wallets of `demo trader` (table demo_wallets) fund their
// delegated addresses from here.
// A service's own backed tokens (the desk's SUSD, XUSD, wBTC, wLTC, wETH: DevnetBacking.ts) are
// not held by the faucet: paying one pays its backing into the service's reserve address, then
// the token's issuer grants it to the payee, as a mint would.
import { SqlClient } from "@effect/sql"
import { Context, Effect, Either, Layer } from "effect"
import { validateLedgerAddress } from "../../chain/address.ts"
import { evmChains, type EvmLedger, EvmLedgers } from "../../chain/evm/EvmLedger.ts"
import { CoinLedgers } from "../../chain/ledger/CoinLedgers.ts"
import { coinChains, type CoinChain } from "../../chain/params.ts"
import { devnetFaucet } from "../../chain/ledger/devnetFaucet.ts"
import { syncOnce } from "../../chain/ledger/follower.ts"
import { makeKeyWallet } from "../../chain/ledger/keyWallet.ts"
import { sumValues, UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { OmniIndexer } from "../../chain/omni/indexer.ts"
import { formatAmount, parseAmount, rescaleUp } from "../../chain/units.ts"
import { DevnetRefused, type DevnetChainName } from "../../../schemas/devnet.ts"
import { AppConfig } from "../Config.ts"
import { openLedgerKey, systemWallet } from "../ledger/SystemWallet.ts"
import { SecretBox } from "../SecretBox.ts"
import { type Backing, DevnetBacking } from "./DevnetBacking.ts"
import { LedgerRegistry } from "../ledger/LedgerRegistry.ts"
import { realNodeRefusal, realNodeSetting } from "./realNode.ts"
import { ledgerNative, needsRegistry, resolveEvmAsset, resolveLedgerAsset, type EvmAsset, type LedgerAsset } from "./assets.ts"
import { type AssetsMismatch, grant, issue, type IssuerDeps, reissue, type RegisteredAsset } from "./propertyIssuer.ts"

import { assetIssuerWallet, deskIssuerWallet } from "../ledger/SystemWallet.ts"

export { assetIssuerWallet, deskIssuerWallet } from "../ledger/SystemWallet.ts"

export interface DevnetChainsShape {
  /** Pays `amount` (decimal, the asset's own unit) to `to`; the txid. */
  readonly pay: (chain: DevnetChainName, to: string, amount: string, asset: string | undefined) => Effect.Effect<string, DevnetRefused>
  /** Mines `blocks` blocks now; the new height. */
  readonly mine: (chain: DevnetChainName, blocks: number) => Effect.Effect<number, DevnetRefused>
  /** The confirmed balance, as a decimal in the asset's own unit. */
  readonly balance: (chain: DevnetChainName, address: string, asset: string | undefined) => Effect.Effect<string, DevnetRefused>
  /** Ledger devnet: issues market asset `code` as a new Omni property; its id and creating txid. */
  readonly issueAsset: (code: string) => Effect.Effect<{ readonly propertyId: number; readonly txid: string }, DevnetRefused>
  /** Ledger devnet: issues desk token `code` as a new managed property of the desk issuer, nothing granted. */
  readonly issueDeskToken: (code: string) => Effect.Effect<{ readonly propertyId: number; readonly txid: string }, DevnetRefused>
  /** Ledger devnet: the property a creating transaction made on this devnet, if it is there. */
  readonly propertyCreatedBy: (txid: string, code: string) => Effect.Effect<number | undefined, DevnetRefused>
  /** Ledger devnet at start: re-issues every registered property (LedgerRegistry) so each gets its id back; how many. */
  readonly reissueAssets: Effect.Effect<number, DevnetRefused | AssetsMismatch>
  /**
   * Ledger devnet: pays `to` from `userId`'s demo wallet so that `to` holds up to `upTo` of
   * `asset` (as far as the wallet has it), then mines a block; the txid (null if nothing was
   * sent) and what `to` holds after.
   */
  readonly fundFromDemo: (userId: number, to: string, asset: string, upTo: string) => Effect.Effect<{ readonly txid: string | null; readonly balance: string }, DevnetRefused>
}

export class DevnetChains extends Context.Tag("shardline/DevnetChains")<DevnetChains, DevnetChainsShape>() {}

/** One line for a person from any error the chain ports raise (they all carry their words in a field). */
const describe = (e: { readonly _tag: string }): string => {
  const fields = e as unknown as Record<string, unknown>
  const words = [fields["message"], fields["reason"]].find((w): w is string => typeof w === "string" && w !== "")
  return (words ?? e._tag).replace(/\s*\n\s*/g, " ")
}

const refused = (e: { readonly _tag: string }): DevnetRefused => (e instanceof DevnetRefused ? e : new DevnetRefused({ message: describe(e) }))

const refuse = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, DevnetRefused, R> =>
  Effect.mapError(effect, refused)

const fromResult = <A>(r: Either.Either<A, { readonly message: string }>): Effect.Effect<A, DevnetRefused> =>
  Either.isRight(r) ? Effect.succeed(r.right) : Effect.fail(new DevnetRefused({ message: r.left.message }))

export const make = Effect.gen(function*() {
  const config = yield* AppConfig
  const utxo = yield* UtxoLedger
  const evm = yield* EvmLedgers
  const coins = yield* CoinLedgers
  const sql = yield* SqlClient.SqlClient
  const box = yield* SecretBox
  const backings = yield* Effect.serviceOption(DevnetBacking)
  const registry = yield* LedgerRegistry
  const faucet = devnetFaucet(utxo)
  // Everything that spends from the faucet, the issuer or a demo wallet, one at a time: two
  // payments from one key before a block would pick the same coins.
  const walletLock = yield* Effect.makeSemaphore(1)
  const oneAtATime = walletLock.withPermits(1)
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

  const dbRefused = (e: { readonly message: string }) => new DevnetRefused({ message: `the database did not answer: ${e.message}` })

  // The market assets and the desk's tokens share the ledger's property ids, so they are
  // re-issued together, in id order, each by its own issuer.
  const registered: Effect.Effect<ReadonlyArray<RegisteredAsset>, DevnetRefused> = Effect.mapError(registry.registered, dbRefused)

  const ledgerAsset = (asset: string | undefined) =>
    Effect.gen(function*() {
      const codes = needsRegistry(asset) ? new Map((yield* registered).map((a) => [a.code.toUpperCase(), a.propertyId])) : undefined
      const resolved: LedgerAsset = yield* fromResult(resolveLedgerAsset(asset, codes))
      if (resolved.kind === "native") return { asset: resolved, decimals: ledgerNative.decimals }
      const property = (yield* synced).property(resolved.property)
      if (property === undefined) return yield* new DevnetRefused({ message: `no Omni property ${resolved.property} on the ledger` })
      return { asset: resolved, decimals: property.divisible ? 8 : 0 }
    })

  const evmLedger = (chain: Exclude<DevnetChainName, "ledger" | CoinChain>) => refuse(evm.get(chain))

  // BTC and LTC: native coin only, paid by that chain's own faucet (the same fixed key).
  const isCoin = (chain: DevnetChainName): chain is CoinChain => chain === "btc" || chain === "ltc"
  const coinFaucets = new Map(coins.chains.map((c) => [c, devnetFaucet(coins.get(c))]))
  const coinAsset = (chain: CoinChain, asset: string | undefined) => {
    const { symbol } = coinChains[chain]
    return asset === undefined || asset.trim().toUpperCase() === symbol
      ? Effect.succeed(coinChains[chain].decimals)
      : Effect.fail(new DevnetRefused({ message: `unknown asset "${asset}" on ${chain}: only its native coin, ${symbol}` }))
  }
  const coinAddress = (chain: CoinChain, address: string) => {
    const check = validateLedgerAddress(address, coins.get(chain).params)
    return check.valid ? Effect.void : Effect.fail(new DevnetRefused({ message: `address ${address} on ${chain}: ${check.error}` }))
  }

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

  /** Decimals of what `pay(chain, …, asset)` pays on a coin or EVM chain. */
  const decimalsOn = (chain: Exclude<DevnetChainName, "ledger">, asset: string | undefined) =>
    Effect.gen(function*() {
      if (isCoin(chain)) return yield* coinAsset(chain, asset)
      const ledger = yield* evmLedger(chain)
      const native = resolveEvmAsset(ledger.chain, asset, undefined)
      if (Either.isRight(native) && native.right.kind === "native") return evmChains[ledger.chain].nativeCurrency.decimals
      return (yield* evmToken(ledger, asset, "pay")).decimals
    })

  const backingOf = (asset: string | undefined): Effect.Effect<Backing | undefined> =>
    asset === undefined || !needsRegistry(asset) || backings._tag === "None" ? Effect.succeed(undefined) : backings.value.backingOf(asset)

  /** A backed token: its backing (rounded up to the backing's unit) into the reserve, then the issuer's grant. */
  const payBacked = (backing: Backing, property: number, to: string, base: bigint, decimals: number) =>
    Effect.gen(function*() {
      if (backing.chain === "ledger") return yield* new DevnetRefused({ message: "a token backed by the ledger's own coin is not supported" })
      const backingDecimals = yield* decimalsOn(backing.chain, backing.asset)
      const backed = yield* fromResult(formatAmount(rescaleUp(base, decimals, backingDecimals), backingDecimals))
      yield* pay(backing.chain, backing.address, backed, backing.asset).pipe(Effect.mapError((e) =>
        new DevnetRefused({ message: `its backing (${backed} ${backing.asset ?? backing.chain} on ${backing.chain}) could not be paid: ${e.message}` })))
      return yield* oneAtATime(refuse(Effect.flatMap(depsOf(backing.issuer), (deps) => grant(deps, property, base, to, "devnet pay"))))
    })

  const pay: DevnetChainsShape["pay"] = (chain, to, amount, asset) =>
    Effect.gen(function*() {
      yield* devnetOnly("pay", chain)
      if (chain === "ledger") {
        const { asset: resolved, decimals } = yield* ledgerAsset(asset)
        const base = yield* fromResult(parseAmount(amount, decimals))
        if (resolved.kind === "native") return yield* oneAtATime(refuse(faucet.pay(to, base)))
        const check = validateLedgerAddress(to, utxo.params)
        if (!check.valid) return yield* new DevnetRefused({ message: `address ${to}: ${check.error}` })
        const backing = yield* backingOf(asset)
        if (backing !== undefined) return yield* payBacked(backing, resolved.property, to, base, decimals)
        const held = (yield* synced).balance(faucet.address, resolved.property)
        if (held < base) {
          const shown = formatAmount(held, decimals)
          return yield* new DevnetRefused({ message: `the devnet faucet holds ${Either.isRight(shown) ? shown.right : held} of property ${resolved.property}, less than ${amount}` })
        }
        return yield* oneAtATime(refuse(faucet.omni({ type: "simpleSend", property: resolved.property, amount: base }, to)))
      }
      if (isCoin(chain)) {
        yield* coinAddress(chain, to)
        const base = yield* fromResult(parseAmount(amount, yield* coinAsset(chain, asset)))
        return yield* oneAtATime(refuse(coinFaucets.get(chain)!.pay(to, base)))
      }
      const ledger = yield* evmLedger(chain)
      // The native coin (ETH, BNB) from the hot wallet, which the devnet funds at genesis.
      const native = resolveEvmAsset(ledger.chain, asset, undefined)
      if (Either.isRight(native) && native.right.kind === "native") {
        return yield* refuse(ledger.nativeTransfer(to, yield* fromResult(parseAmount(amount, evmChains[ledger.chain].nativeCurrency.decimals))))
      }
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
      if (isCoin(chain)) {
        const coin = coins.get(chain)
        yield* refuse(coin.mine(blocks, coinFaucets.get(chain)!.address))
        return (yield* refuse(coin.tip)).height
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
      if (isCoin(chain)) {
        yield* coinAddress(chain, address)
        const decimals = yield* coinAsset(chain, asset)
        return yield* fromResult(formatAmount(sumValues(yield* refuse(coins.get(chain).listUnspent([address]))), decimals))
      }
      const ledger = yield* evmLedger(chain)
      // The native coin (ETH, BNB): 18 decimals on every EVM chain here.
      const resolved = resolveEvmAsset(ledger.chain, asset, undefined)
      if (Either.isRight(resolved) && resolved.right.kind === "native") return yield* fromResult(formatAmount(yield* refuse(ledger.nativeBalance(address)), evmChains[ledger.chain].nativeCurrency.decimals))
      const { decimals, token } = yield* evmToken(ledger, asset, "balance")
      return yield* fromResult(formatAmount(yield* refuse(ledger.tokenBalance(token, address)), decimals))
    })

  // Each issuer's wallet, made once per node (it remembers the coins its pending payments spent).
  const issuerWallets = new Map<string, IssuerDeps>()
  const depsOf = (name: string): Effect.Effect<IssuerDeps, DevnetRefused> => Effect.suspend(() => {
    const known = issuerWallets.get(name)
    return known !== undefined ? Effect.succeed(known) : systemWallet(name).pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.provideService(SecretBox, box),
      Effect.mapError(dbRefused),
      Effect.map((key) => {
        const deps = { ledger: utxo, faucet, issuer: makeKeyWallet(utxo, key.privateKey), synced }
        issuerWallets.set(name, deps)
        return deps
      })
    )
  })
  const issuerDeps = depsOf(assetIssuerWallet)

  const issueAsset: DevnetChainsShape["issueAsset"] = (code) =>
    Effect.gen(function*() {
      yield* devnetOnly("issue", "ledger")
      return yield* oneAtATime(refuse(Effect.flatMap(issuerDeps, (deps) => issue(deps, code))))
    })

  const issueDeskToken: DevnetChainsShape["issueDeskToken"] = (code) =>
    Effect.gen(function*() {
      yield* devnetOnly("issue", "ledger")
      return yield* oneAtATime(refuse(Effect.flatMap(depsOf(deskIssuerWallet), (deps) => issue(deps, code, undefined, false))))
    })

  const propertyCreatedBy: DevnetChainsShape["propertyCreatedBy"] = (txid, code) =>
    Effect.map(synced, (indexer) => indexer.properties().find((p) => p.txid === txid && p.name === code)?.id)

  const reissueAssets: DevnetChainsShape["reissueAssets"] = Effect.gen(function*() {
    yield* devnetOnly("issue", "ledger")
    const rows = yield* registered
    return yield* oneAtATime(
      Effect.mapError(reissue((issuer) => depsOf(issuer ?? assetIssuerWallet), rows), (e) => (e._tag === "AssetsMismatch" ? e : refused(e)))
    )
  })

  const demoWallet = (userId: number) =>
    Effect.gen(function*() {
      const [row] = yield* sql<{ address: string; key_enc: string }>`SELECT address, key_enc FROM demo_wallets WHERE user_id = ${userId}`.pipe(Effect.mapError(dbRefused))
      if (row === undefined) return yield* new DevnetRefused({ message: `user ${userId} has no demo wallet (only users made by demo trader have one)` })
      return makeKeyWallet(utxo, openLedgerKey(box, row.key_enc, row.address, `demo wallet of user ${userId} (table demo_wallets)`).privateKey)
    })

  const fundFromDemo: DevnetChainsShape["fundFromDemo"] = (userId, to, asset, upTo) =>
    Effect.gen(function*() {
      yield* devnetOnly("fund", "ledger")
      const check = validateLedgerAddress(to, utxo.params)
      if (!check.valid) return yield* new DevnetRefused({ message: `address ${to}: ${check.error}` })
      const { asset: resolved, decimals } = yield* ledgerAsset(asset)
      if (resolved.kind === "native") return yield* new DevnetRefused({ message: "a demo wallet funds Omni assets only" })
      const target = yield* fromResult(parseAmount(upTo, decimals))
      const wallet = yield* demoWallet(userId)
      const txid = yield* oneAtATime(Effect.gen(function*() {
        const indexer = yield* synced
        const held = indexer.balance(to, resolved.property)
        const available = indexer.balance(wallet.address, resolved.property)
        const amount = target - held < available ? target - held : available
        if (amount <= 0n) return null
        const sent = yield* refuse(wallet.omni({ type: "simpleSend", property: resolved.property, amount }, to))
        yield* refuse(utxo.mine(1, faucet.address))
        return sent
      }))
      const after = (yield* synced).balance(to, resolved.property)
      return { txid, balance: yield* fromResult(formatAmount(after, decimals)) }
    })

  return DevnetChains.of({ pay, mine, balance, issueAsset, issueDeskToken, propertyCreatedBy, reissueAssets, fundFromDemo })
})

export const layer: Layer.Layer<DevnetChains, never, AppConfig | UtxoLedger | EvmLedgers | CoinLedgers | SqlClient.SqlClient | SecretBox | LedgerRegistry> = Layer.effect(DevnetChains, make)
