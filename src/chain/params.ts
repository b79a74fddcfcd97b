// Chain parameters as data. The same code runs against our token ledger and against a
// litecoind regtest node: only this record changes. Convert address formats at adapter edges.
import type { Network } from "bitcoinjs-lib"

export interface UtxoChainParams {
  readonly name: string
  /** bitcoinjs network: version bytes, message prefix (with its length byte), bech32 hrp. */
  readonly network: Network
  /** BIP-44 coin type used in m/44'/coinType'/0'. */
  readonly coinType: number
  /** Outputs below this many satoshis are non-standard (measured 5460 on litecoind). */
  readonly dustSats: bigint
  /** Minimum relay fee, satoshis per virtual byte. */
  readonly minFeeRateSatPerVb: bigint
  /** Largest OP_RETURN data push a standard transaction may carry, in bytes. */
  readonly opReturnMaxBytes: number
  /** Blocks before a coinbase output may be spent. */
  readonly coinbaseMaturity: number
}

/** The token ledger ("T" addresses). Version bytes: P2PKH 0x42 ("T…"), P2SH 0x32 ("M…"). */
export const ledgerParams: UtxoChainParams = {
  name: "ledger",
  network: {
    // Length byte first, as wallets serialise it: "Shardline Signed Message:\n" is 26 bytes.
    messagePrefix: "\x1aShardline Signed Message:\n",
    bech32: "tok",
    // Serialises as "Tpub…"/"Tprv…"; any four bytes work, these were chosen for the prefix.
    bip32: { public: 0x022dbf5b, private: 0x022dbb21 },
    pubKeyHash: 0x42,
    scriptHash: 0x32,
    wif: 0xc2
  },
  coinType: 696969,
  dustSats: 5460n,
  minFeeRateSatPerVb: 1n,
  opReturnMaxBytes: 80,
  coinbaseMaturity: 100
}

/** litecoind -regtest, our real-node stand-in. Same rules, the node's own prefixes. */
export const litecoinRegtestParams: UtxoChainParams = {
  name: "litecoin-regtest",
  network: {
    messagePrefix: "\x19Litecoin Signed Message:\n",
    bech32: "rltc",
    bip32: { public: 0x043587cf, private: 0x04358394 },
    pubKeyHash: 0x6f,
    scriptHash: 0x3a,
    wif: 0xef
  },
  coinType: 1,
  dustSats: 5460n,
  minFeeRateSatPerVb: 1n,
  opReturnMaxBytes: 80,
  coinbaseMaturity: 100
}

/**
 * bitcoind -regtest: the BTC chain of the wrap desk (an in-process devnet by default, or a node
 * at SHARDLINE_BTC_RPC_URL). Bitcoin Core's regtest prefixes and policy: dust 546 sat for P2PKH.
 */
export const bitcoinRegtestParams: UtxoChainParams = {
  name: "bitcoin-regtest",
  network: {
    messagePrefix: "\x18Bitcoin Signed Message:\n",
    bech32: "bcrt",
    bip32: { public: 0x043587cf, private: 0x04358394 },
    pubKeyHash: 0x6f,
    scriptHash: 0xc4,
    wif: 0xef
  },
  coinType: 1,
  dustSats: 546n,
  minFeeRateSatPerVb: 1n,
  opReturnMaxBytes: 80,
  coinbaseMaturity: 100
}

/** The wrap desk's coin chains (BTC, LTC) and their regtest rules: LTC is litecoind -regtest's. */
export const coinChainNames = ["btc", "ltc"] as const
export type CoinChain = (typeof coinChainNames)[number]

export const coinChains: { readonly [C in CoinChain]: { readonly chain: C; readonly symbol: string; readonly decimals: number; readonly params: UtxoChainParams } } = {
  btc: { chain: "btc", symbol: "BTC", decimals: 8, params: bitcoinRegtestParams },
  ltc: { chain: "ltc", symbol: "LTC", decimals: 8, params: litecoinRegtestParams }
}
