// The live reserves scan: every vault (cold and hot per chain) and every recorded deposit
// address, read from the chains themselves, against the circulating supply of every desk token
// from the node's Omni view. What it reads:
//   btc, ltc:       native coin of each address (confirmed UTXOs), in batches of the port's limit;
//   ethereum:       ETH (backs wETH) and the dollar stablecoins;
//   base, bsc:      the dollar stablecoins;
// decimals come from each contract's decimals(), read once per node. A token's circulating
// supply is its property's total (granted minus revoked) less what the desk issuer holds.
// Each scan leaves a heartbeat (desk_heartbeats "reserves-scan").
import { SqlClient } from "@effect/sql"
import { Context, Effect, Either, Layer } from "effect"
import { isAddress } from "viem"
import { tokenContractAddress } from "../../chain/evm/tokenAddress.ts"
import { type EvmChain, EvmLedgers } from "../../chain/evm/EvmLedger.ts"
import { CoinLedgers } from "../../chain/ledger/CoinLedgers.ts"
import { ledgerLimits } from "../../chain/ledger/UtxoLedger.ts"
import { coinChains, type CoinChain } from "../../chain/params.ts"
import { addressScript } from "../../chain/txBuilder.ts"
import { evmKind } from "../../platform/ChainsLive.ts"
import { AppConfig } from "../../platform/Config.ts"
import { invalidSetting } from "../../platform/settings.ts"
import { OmniView } from "../../platform/ledger/OmniView.ts"
import { deskIssuerWallet, systemWallet } from "../../platform/ledger/SystemWallet.ts"
import { beat } from "../heartbeats.ts"
import { listTokens } from "../tokens/tokenStore.ts"
import { DeskWallets } from "../wallets/DeskWallets.ts"
import type { DeskChain } from "../wallets/paths.ts"
import { type AddressGroup, type Holding, type ReservesReport, reservesReport, type TokenSupply } from "./reserves.ts"
import { type TokenContract as StablecoinContract, tokenContractSymbols } from "../../chain/evm/tokenContracts.ts"

/** Balance reads in flight at once, per scan. */
export const scanConcurrency = 16

export interface ScanAddress {
  readonly chain: DeskChain
  readonly group: AddressGroup
  readonly address: string
}

export interface ReserveScannerShape {
  /** Scans now: the reserves report and how long it took. */
  readonly scan: Effect.Effect<{ readonly report: ReservesReport; readonly ms: number }>
  /** Circulating supply per desk token, from the Omni view. */
  readonly supplies: Effect.Effect<ReadonlyArray<TokenSupply>>
  /** Scans a given address list (the benchmark's 1,000 vault addresses). */
  readonly scanAddresses: (addresses: ReadonlyArray<ScanAddress>) => Effect.Effect<ReadonlyArray<Holding>>
}

export class ReserveScanner extends Context.Tag("shardline/desk/ReserveScanner")<ReserveScanner, ReserveScannerShape>() {}

export const make = Effect.gen(function*() {
  const config = yield* AppConfig
  const sql = yield* SqlClient.SqlClient
  const wallets = yield* DeskWallets
  const coins = yield* CoinLedgers
  const evm = yield* EvmLedgers
  const omni = yield* OmniView
  const issuer = yield* systemWallet(deskIssuerWallet)

  // The stablecoins per chain, from the one table (tokenContracts.ts): on devnets every symbol (the
  // configured contract, else the devnet's own); on real nodes only the configured ones. A mixed-case
  // address with a bad EIP-55 checksum stops the start here, as the setting's error.
  let contracts: ReadonlyArray<StablecoinContract>
  if (evmKind(config) === "devnet") {
    contracts = yield* Effect.forEach(evm.chains, (chain) =>
      Effect.map(Effect.orDie(evm.get(chain)), (ledger) => tokenContractSymbols.map((symbol) => ({ chain, symbol, address: tokenContractAddress(config.evmTokenContracts, ledger, symbol) }))))
      .pipe(Effect.map((all) => all.flat()))
  } else {
    contracts = config.evmTokenContracts.filter((c) => evm.chains.includes(c.chain))
  }
  const badChecksum = config.evmTokenContracts.find((c) => !isAddress(c.address, { strict: true }))
  if (badChecksum !== undefined) {
    return yield* Effect.fail(invalidSetting("EVM_TOKEN_CONTRACTS", `${badChecksum.chain}:${badChecksum.symbol}: bad EIP-55 checksum (mixed case that does not match): mistyped?`))
  }
  const decimals = new Map<string, number>()
  const decimalsOf = (chain: EvmChain, token: string) =>
    Effect.gen(function*() {
      const key = `${chain}:${token.toLowerCase()}`
      const known = decimals.get(key)
      if (known !== undefined) return known
      const d = yield* Effect.flatMap(evm.get(chain), (l) => l.tokenDecimals(token))
      decimals.set(key, d)
      return d
    })

  const utxoHoldings = (chain: CoinChain, list: ReadonlyArray<ScanAddress>) =>
    Effect.gen(function*() {
      const ledger = coins.get(chain)
      const out: Array<Holding> = []
      for (let i = 0; i < list.length; i += ledgerLimits.listUnspentOwnersMax) {
        const batch = list.slice(i, i + ledgerLimits.listUnspentOwnersMax)
        const utxos = yield* ledger.listUnspent(batch.map((a) => a.address))
        // The port answers UTXOs, not owners: match each output's script back to its address.
        const byAddress = new Map<string, bigint>()
        const scripts = new Map(batch.flatMap((a) => {
          const script = addressScript(a.address, ledger.params)
          return Either.isRight(script) ? [[Buffer.from(script.right).toString("hex"), a.address] as const] : []
        }))
        for (const u of utxos) {
          const owner = scripts.get(Buffer.from(u.script).toString("hex"))
          if (owner !== undefined) byAddress.set(owner, (byAddress.get(owner) ?? 0n) + u.value)
        }
        for (const a of batch) out.push({ chain, group: a.group, asset: coinChains[chain].symbol as "BTC" | "LTC", address: a.address, amount: byAddress.get(a.address) ?? 0n, decimals: 8 })
      }
      return out
    })

  const evmHoldings = (chain: EvmChain, list: ReadonlyArray<ScanAddress>) =>
    Effect.gen(function*() {
      const ledger = yield* evm.get(chain)
      const tokens = contracts.filter((c) => c.chain === chain)
      const perAddress = yield* Effect.forEach(list, (a) =>
        Effect.gen(function*() {
          const out: Array<Holding> = []
          if (chain === "ethereum") out.push({ chain, group: a.group, asset: "ETH", address: a.address, amount: yield* ledger.nativeBalance(a.address), decimals: 18 })
          for (const t of tokens) {
            out.push({ chain, group: a.group, asset: t.symbol, address: a.address, amount: yield* ledger.tokenBalance(t.address, a.address), decimals: yield* decimalsOf(chain, t.address) })
          }
          return out
        }), { concurrency: scanConcurrency })
      return perAddress.flat()
    })

  const scanAddresses: ReserveScannerShape["scanAddresses"] = (addresses) =>
    Effect.gen(function*() {
      const parts: Array<ReadonlyArray<Holding>> = []
      for (const chain of coins.chains) parts.push(yield* utxoHoldings(chain, addresses.filter((a) => a.chain === chain)))
      for (const chain of evm.chains) {
        const list = addresses.filter((a) => a.chain === chain)
        if (list.length > 0) parts.push(yield* evmHoldings(chain, list))
      }
      return parts.flat()
    }).pipe(Effect.orDie)

  const supplies: ReserveScannerShape["supplies"] = Effect.gen(function*() {
    yield* omni.sync
    const tokens = yield* Effect.orDie(Effect.provideService(listTokens, SqlClient.SqlClient, sql))
    return yield* Effect.forEach(tokens, (t) =>
      Effect.gen(function*() {
        const property = t.propertyId === null ? undefined : yield* omni.property(t.propertyId)
        // Only a property of the desk issuer counts: another issuer's id in the registry is a mistake, not supply.
        const circulating = property === undefined || property.issuer !== issuer.address
          ? 0n
          : property.totalTokens - (yield* omni.balance(issuer.address, property.id))
        return { code: t.code, kind: t.kind, baseAsset: t.baseAsset, propertyId: t.propertyId, circulating }
      }))
  })

  const addresses = Effect.gen(function*() {
    const deposits = yield* sql<{ chain: DeskChain; address: string }>`SELECT chain, address FROM desk_deposit_addresses ORDER BY chain, idx`
    return [
      ...wallets.vaults.map((v) => ({ chain: v.chain, group: v.group, address: v.address })),
      ...deposits.map((d) => ({ chain: d.chain, group: "deposits" as const, address: d.address }))
    ]
  }).pipe(Effect.orDie)

  const scan: ReserveScannerShape["scan"] = Effect.gen(function*() {
    const started = Date.now()
    const list = yield* addresses
    const [holdings, supply] = yield* Effect.all([scanAddresses(list), supplies], { concurrency: 2 })
    const report = reservesReport(holdings, supply, new Date(), list.filter((a) => a.chain !== "ledger").length)
    const ms = Date.now() - started
    yield* beat("reserves-scan", `${report.addressesScanned} addresses in ${ms} ms`).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.orDie)
    return { report, ms }
  })

  return ReserveScanner.of({ scan, supplies, scanAddresses })
})

/** A stablecoin setting the scan cannot use stops the node at start (it is a defect here: the setting is read by this layer). */
export const layer = Layer.effect(ReserveScanner, make).pipe(Layer.orDie)
