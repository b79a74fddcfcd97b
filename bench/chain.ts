// `npm run bench -- chain`: the chain layer's throughput on this machine. Transactions built and
// signed per second (P2PKH send with change, Omni simple send), Omni transactions indexed,
// devnet blocks mined, plus the key-layer rows (bench/parts/chainKeys.ts) and the EVM rows
// (bench/parts/evm.ts). Prints a table and writes bench/results/chain.json; never fails on timing.
import { Effect } from "effect"
import { payments, Transaction } from "bitcoinjs-lib"
import { ECPairFactory } from "ecpair"
import * as ecc from "tiny-secp256k1"
import { unwrap } from "../harness/either.ts"
import { p2pkhAddressOfPubkey } from "../src/chain/address.ts"
import { makeUtxoDevnet } from "../src/chain/ledger/devnet.ts"
import { OmniIndexer } from "../src/chain/omni/indexer.ts"
import { ledgerParams as params } from "../src/chain/params.ts"
import { buildOmni, buildSend, type Utxo } from "../src/chain/txBuilder.ts"
import { measureKeys } from "./parts/chainKeys.ts"
import { measureDevnetMemory } from "./parts/devnetMemory.ts"
import { measureEvm } from "./parts/evm.ts"
import { printTable, writeResults } from "./report.ts"

/** Work per measurement; enough for a stable rate, small enough to keep the bench short. */
const TXS = 1_000
const WARMUP = 50
const EMPTY_BLOCKS = 1_000
/** Devnet blocks carrying sends, and sends per block. */
const FULL_BLOCKS = 20
const SENDS_PER_BLOCK = 20
/** Omni sends per indexed block. */
const OMNI_PER_BLOCK = 100

type Row = { metric: string; perSecond: number }

const perSecond = (count: number, ms: number): number => Math.round((count * 1000) / Math.max(ms, 1e-3))
const timeMs = (run: () => void): number => {
  const t0 = performance.now()
  run()
  return performance.now() - t0
}

interface Wallet {
  readonly privateKey: Uint8Array
  readonly address: string
  readonly script: Uint8Array
}
const wallet = (seed: number): Wallet => {
  const privateKey = Uint8Array.from({ length: 32 }, (_, i) => (i === 31 ? seed : 0x20 + i))
  const { publicKey } = ECPairFactory(ecc).fromPrivateKey(privateKey)
  return { privateKey, address: unwrap(p2pkhAddressOfPubkey(publicKey, params)), script: payments.p2pkh({ pubkey: publicKey }).output! }
}

/** A coinbase-shaped funding tx with `n` outputs to `script`, as spendable UTXOs. */
const funding = (script: Uint8Array, n: number): { hex: string; utxos: Utxo[] } => {
  const tx = new Transaction()
  tx.addInput(new Uint8Array(32), 0xffffffff, 0xffffffff, Uint8Array.of(1, 1))
  for (let i = 0; i < n; i++) tx.addOutput(script, 1_000_000n)
  const hex = tx.toHex()
  return { hex, utxos: tx.outs.map((o, vout) => ({ txid: tx.getId(), vout, value: o.value, script, prevTxHex: hex })) }
}

const alice = wallet(1)
const bob = wallet(2)

const measureBuilder = (): Row[] => {
  const { utxos } = funding(alice.script, 1)
  const input = utxos // the same input each time: building does not consume it
  const send = (): void => {
    unwrap(buildSend(params, { inputs: input, signer: alice, outputs: [{ address: bob.address, value: 100_000n }], changeAddress: alice.address }))
  }
  const omni = (): void => {
    unwrap(buildOmni(params, { inputs: input, signer: alice, payload: { type: "simpleSend", property: 3, amount: 1n }, reference: bob.address, changeAddress: alice.address }))
  }
  for (let i = 0; i < WARMUP; i++) (send(), omni())
  const sendMs = timeMs(() => { for (let i = 0; i < TXS; i++) send() })
  const omniMs = timeMs(() => { for (let i = 0; i < TXS; i++) omni() })
  return [
    { metric: "P2PKH sends built and signed (1 in, pay + change)", perSecond: perSecond(TXS, sendMs) },
    { metric: "Omni simple sends built and signed (OP_RETURN, change, reference)", perSecond: perSecond(TXS, omniMs) }
  ]
}

const measureIndexer = (): Row[] => {
  const blocks = TXS / OMNI_PER_BLOCK
  const fund = funding(alice.script, TXS + 2)
  const build = (i: number, payload: Parameters<typeof buildOmni>[1]["payload"], reference?: string): string =>
    unwrap(buildOmni(params, { inputs: [fund.utxos[i]!], signer: alice, payload, changeAddress: alice.address, ...(reference === undefined ? {} : { reference }) })).hex
  const setup = [
    fund.hex,
    build(0, { type: "createManaged", ecosystem: 1, divisible: true, previousPropertyId: 0, category: "", subcategory: "", name: "USD", url: "", data: "" }),
    build(1, { type: "grant", property: 3, amount: 10n ** 15n, memo: "" })
  ]
  const sends = Array.from({ length: TXS }, (_, i) => build(i + 2, { type: "simpleSend", property: 3, amount: 1n }, bob.address))
  const ix = new OmniIndexer({ params })
  unwrap(ix.apply({ height: 0, hash: "setup", txs: setup }))
  const ms = timeMs(() => {
    for (let b = 0; b < blocks; b++) unwrap(ix.apply({ height: b + 1, hash: `b${b}`, txs: sends.slice(b * OMNI_PER_BLOCK, (b + 1) * OMNI_PER_BLOCK) }))
  })
  if (ix.balance(bob.address, 3) !== BigInt(TXS)) throw new Error("indexer bench: not every send was applied")
  return [{ metric: `Omni simple sends indexed (${OMNI_PER_BLOCK} per block, parse + apply)`, perSecond: perSecond(TXS, ms) }]
}

const measureDevnet = async (): Promise<Row[]> => {
  const devnet = makeUtxoDevnet({ params })
  try {
    const { ledger } = devnet
    const emptyT0 = performance.now()
    await Effect.runPromise(ledger.mine(EMPTY_BLOCKS, bob.address))
    const emptyMs = performance.now() - emptyT0

    // Mature coinbases to alice fund the sends (one coinbase output per send).
    const sends = FULL_BLOCKS * SENDS_PER_BLOCK
    await Effect.runPromise(ledger.mine(sends, alice.address))
    await Effect.runPromise(ledger.mine(params.coinbaseMaturity, bob.address))
    const utxos = (await Effect.runPromise(ledger.listUnspent([alice.address]))).filter((u) => u.confirmations >= params.coinbaseMaturity)
    if (utxos.length < sends) throw new Error(`devnet bench: ${utxos.length} mature coinbases, need ${sends}`)
    const txs = utxos.slice(0, sends).map((u) =>
      unwrap(buildSend(params, { inputs: [u], signer: alice, outputs: [{ address: bob.address, value: 100_000n }], changeAddress: alice.address })).hex
    )
    const fullT0 = performance.now()
    for (let b = 0; b < FULL_BLOCKS; b++) {
      for (const hex of txs.slice(b * SENDS_PER_BLOCK, (b + 1) * SENDS_PER_BLOCK)) await Effect.runPromise(ledger.broadcast(hex))
      await Effect.runPromise(ledger.mine(1, bob.address))
    }
    const fullMs = performance.now() - fullT0
    return [
      { metric: "devnet blocks mined (empty)", perSecond: perSecond(EMPTY_BLOCKS, emptyMs) },
      { metric: `devnet blocks mined with ${SENDS_PER_BLOCK} sends each (broadcast + mine)`, perSecond: perSecond(FULL_BLOCKS, fullMs) }
    ]
  } finally {
    devnet.close()
  }
}

export const run = async (): Promise<void> => {
  console.log("chain: measuring…")
  const rows: Row[] = [
    ...(await measureKeys()),
    ...measureBuilder(),
    ...measureIndexer(),
    ...(await measureDevnet()),
    ...(await measureEvm())
  ]
  const memory = await measureDevnetMemory()
  printTable("chain", rows)
  printTable("devnet heap per empty block", memory)
  writeResults("chain", { rates: rows, devnetMemory: memory })
}
