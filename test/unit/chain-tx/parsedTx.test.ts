// A leg is parsed and hashed once per process (src/chain/parsedTx.ts, issue 22: node CPU per
// trade): the builder remembers what it signs, so the next leg spending its change, the coin pool
// taking it in, the RPC ledger's broadcast and the Omni indexer reading its block find it parsed.
import { Transaction } from "bitcoinjs-lib"
import { describe, expect, it } from "vitest"
import { CoinPool } from "../../../src/chain/ledger/coinPool.ts"
import { OmniIndexer } from "../../../src/chain/omni/indexer.ts"
import { knownParsed, parsedTx, parsedTxMax } from "../../../src/chain/parsedTx.ts"
import { buildOmni, buildSend } from "../../../src/chain/txBuilder.ts"
import { fund, params, unwrap, wallet } from "./fixtures.ts"

const alice = wallet(11)
const bob = wallet(12)
const send31 = { type: "simpleSend", property: 31, amount: 1_000n } as const

describe("parsed transactions, once per bytes", () => {
  it("a built leg is known parsed with its txid; the next leg spending its change does not parse it again", () => {
    const { utxos } = fund(alice.script, [1_000_000n])
    const first = unwrap(buildOmni(params, { inputs: utxos, signer: alice, payload: send31, reference: bob.address, changeAddress: alice.address }))
    const known = knownParsed(first.hex)
    expect(known?.txid).toBe(first.txid)
    // The same object every time: the bytes were parsed (here: built) once.
    expect(parsedTx(first.hex)).toBe(known)
    expect(known!.tx.toHex()).toBe(first.hex)
    // The coin pool takes the leg from the cache: its change is the next input, with the right txid.
    const pool = new CoinPool(alice.script, [])
    pool.spend(first.hex)
    const [change] = pool.usable(25)
    expect(change?.txid).toBe(first.txid)
    const second = unwrap(buildOmni(params, { inputs: [change!], signer: alice, payload: send31, reference: bob.address, changeAddress: alice.address }))
    expect(Buffer.from(Transaction.fromHex(second.hex).ins[0]!.hash).reverse().toString("hex")).toBe(first.txid)
    expect(knownParsed(second.hex)?.txid).toBe(second.txid)
  })

  it("a transaction not built here is parsed on first use, then known; a block's others are only looked up", () => {
    const { tx } = fund(bob.script, [5_000n])
    const hex = tx.toHex()
    expect(knownParsed(hex)).toBeUndefined()
    expect(parsedTx(hex).txid).toBe(tx.getId())
    expect(knownParsed(hex)?.txid).toBe(tx.getId())
    expect(() => parsedTx("zz")).toThrow()
  })

  it("keeps at most parsedTxMax entries, the oldest leaving first", () => {
    const { utxos } = fund(alice.script, [1_000_000n])
    const oldest = unwrap(buildSend(params, { inputs: utxos, signer: alice, changeAddress: alice.address, outputs: [{ address: bob.address, value: 10_000n }] }))
    for (let i = 0; i < parsedTxMax; i++) parsedTx(fund(bob.script, [1_000n + BigInt(i)]).tx.toHex())
    expect(knownParsed(oldest.hex)).toBeUndefined()
  })

  it("the indexer's records are the same whether a block's leg was known parsed or not", () => {
    const { utxos, tx: funding } = fund(alice.script, [1_000_000n])
    const leg = unwrap(buildOmni(params, { inputs: utxos, signer: alice, payload: send31, reference: bob.address, changeAddress: alice.address }))
    const block = (h: number) => ({ height: h, hash: String(h).padStart(64, "0"), txs: [funding.toHex(), leg.hex] })
    const known = new OmniIndexer({ params })
    const recordsKnown = unwrap(known.apply(block(0)))
    // Evict it, then the same block again on a fresh indexer: parsed from the bytes.
    for (let i = 0; i < parsedTxMax; i++) parsedTx(fund(bob.script, [2_000n + BigInt(i)]).tx.toHex())
    expect(knownParsed(leg.hex)).toBeUndefined()
    const fresh = new OmniIndexer({ params })
    expect(unwrap(fresh.apply(block(0)))).toEqual(recordsKnown)
    expect(recordsKnown.map((r) => r.txid)).toEqual([leg.txid])
  })
})
