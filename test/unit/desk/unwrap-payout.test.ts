// An unwrap's coin payout, the pure parts: which coins of the hot vault a payout takes (largest
// first, never one an already recorded payout spends, enough for the amount and its fee), what a
// recorded payout spends (read back from its bytes), and the amounts of ETH wrap and unwrap
// orders (wei in, token out; token in, wei out), exact in bigint.
import { Transaction } from "bitcoinjs-lib"
import { ECPairFactory } from "ecpair"
import { Either } from "effect"
import * as ecc from "tiny-secp256k1"
import { describe, expect, it } from "vitest"
import { p2pkhAddressOfPubkey } from "../../../src/chain/address.ts"
import { coinChains } from "../../../src/chain/params.ts"
import { addressScript, type Utxo } from "../../../src/chain/txBuilder.ts"
import { pickCoins, spentBy } from "../../../src/desk/orders/coinPayout.ts"
import { quote, step, type DeskOrder } from "../../../src/desk/orders/deskOrderState.ts"

const params = coinChains.btc.params
const ECPair = ECPairFactory(ecc)
const key = ECPair.makeRandom({ network: params.network })
const address = Either.getOrThrow(p2pkhAddressOfPubkey(key.publicKey, params))
const script = Either.getOrThrow(addressScript(address, params))
const coin = (n: number, value: bigint): Utxo => ({ txid: n.toString(16).padStart(64, "0"), vout: n % 3, value, script, prevTxHex: "" })

describe("unwrap coin payout", () => {
  const coins = [coin(1, 10_000n), coin(2, 5_000_000n), coin(3, 200_000_000n), coin(4, 80_000n)]

  it("takes the largest coins first until the amount and the fee are covered", () => {
    expect(pickCoins(coins, new Set(), 1_000_000n, params)?.map((c) => c.value)).toEqual([200_000_000n])
    expect(pickCoins(coins, new Set(), 204_000_000n, params)?.map((c) => c.value)).toEqual([200_000_000n, 5_000_000n])
    // The fee of the transaction counts: exactly the coins' total is not enough.
    expect(pickCoins(coins, new Set(), 205_090_000n, params)).toBeUndefined()
    expect(pickCoins([], new Set(), 1n, params)).toBeUndefined()
  })

  it("never takes a coin an already recorded payout spends", () => {
    const taken = new Set([`${coins[2]!.txid}:${coins[2]!.vout}`])
    expect(pickCoins(coins, taken, 1_000_000n, params)?.map((c) => c.value)).toEqual([5_000_000n])
    expect(pickCoins(coins, taken, 6_000_000n, params)).toBeUndefined()
  })

  it("reads the coins a recorded payout spends from its bytes (txid in display order, vout)", () => {
    const tx = new Transaction()
    for (const c of [coins[1]!, coins[3]!]) tx.addInput(Buffer.from(c.txid, "hex").reverse(), c.vout)
    tx.addOutput(Buffer.from(script), 1_000n)
    expect(spentBy(tx.toHex())).toEqual([`${coins[1]!.txid}:${coins[1]!.vout}`, `${coins[3]!.txid}:${coins[3]!.vout}`])
  })

  it("quotes ETH wrap (wei in, wETH out) and unwrap (wETH in, wei out) exactly, fee rounded up, payout down", () => {
    // Wrap 0.25 ETH at 10 bps: fee 0.00025 ETH, 0.24975 wETH granted.
    expect(quote(25n * 10n ** 16n, 10, 18, 8)).toEqual({ fee: 25n * 10n ** 13n, payout: 24_975_000n })
    // A wei below the token's 8 decimals stays with the fee.
    expect(quote(10n ** 18n + 1n, 10, 18, 8)).toEqual({ fee: 10n ** 15n + 1n, payout: 99_900_000n })
    // Unwrap 0.1 wETH at 10 bps: fee 0.0001 wETH, 0.0999 ETH paid in wei.
    expect(quote(10_000_000n, 10, 8, 18)).toEqual({ fee: 10_000n, payout: 999n * 10n ** 14n })
    // Unwrap 0.5 wBTC at 10 bps: 0.4995 BTC.
    expect(quote(50_000_000n, 10, 8, 8)).toEqual({ fee: 50_000n, payout: 49_950_000n })
  })

  it("an unwrap whose token deposit is not the ordered amount is refunded on the ledger, never burned or paid", () => {
    const o: DeskOrder = { kind: "unwrap", status: "awaiting_deposit", amount: 50_000_000n, fee: 50_000n, payout: 49_950_000n, requiredConfirmations: 1, expiresAtMs: 10_000 }
    const s = step(o, { _tag: "DepositSighting", deposit: { txid: "d".repeat(64), amount: 30_000_000n, confirmations: 1 }, nowMs: 0 })
    expect(s.order.status).toBe("refunding")
    expect(s.milestones).toEqual(["deposit_seen", "deposit_confirmed"])
    expect(step(s.order, { _tag: "BurnRecorded", txid: "b" }).order.status).toBe("refunding")
    expect(step(s.order, { _tag: "PayoutRecorded", txid: "p" }).order.status).toBe("refunding")
  })
})

