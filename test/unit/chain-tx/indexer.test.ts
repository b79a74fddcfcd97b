import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { OmniIndexer, referenceOf, FIRST_MAIN_PROPERTY_ID, FIRST_TEST_PROPERTY_ID, type IndexerBlock } from "../../../src/chain/omni/indexer.ts"
import { encodeOmniPayload, type OmniPayload } from "../../../src/chain/omni/codec.ts"
import { buildOmni, buildStamp, signUnchecked, nullDataScript, type Utxo } from "../../../src/chain/txBuilder.ts"
import { fund, params, unwrap, wallet, type Wallet } from "./fixtures.ts"

const alice = wallet(11) // the issuer
const bob = wallet(12)
const carol = wallet(13)

/** A wallet with coins: each Omni tx spends a fresh funding output. */
const funded = (w: Wallet, n: number) => {
  const { tx, utxos } = fund(w.script, Array.from({ length: n }, () => 100_000n))
  const pool = [...utxos]
  const take = (): Utxo => {
    const u = pool.shift()
    if (u === undefined) throw new Error("test wallet ran out of coins")
    return u
  }
  const omni = (payload: OmniPayload, reference?: string): string =>
    unwrap(buildOmni(params, { inputs: [take()], signer: w, payload, changeAddress: w.address, ...(reference === undefined ? {} : { reference }) })).hex
  return { fundingHex: tx.toHex(), take, omni }
}

const create = (name: string, ecosystem: 1 | 2 = 1): OmniPayload => ({ type: "createManaged", ecosystem, divisible: true, previousPropertyId: 0, category: "", subcategory: "", name, url: "", data: "" })
const send = (property: number, amount: bigint): OmniPayload => ({ type: "simpleSend", property, amount })
const grant = (property: number, amount: bigint): OmniPayload => ({ type: "grant", property, amount, memo: "" })
const revoke = (property: number, amount: bigint): OmniPayload => ({ type: "revoke", property, amount, memo: "" })

const blockAt = (height: number, txs: string[], tag = "a"): IndexerBlock => ({ height, hash: `${tag}${height}`.padStart(64, "0"), txs })

/** State a reorg must restore exactly. */
const snapshot = (ix: OmniIndexer) => ({
  balances: [...ix.balances()].sort((a, b) => `${a.property}${a.address}`.localeCompare(`${b.property}${b.address}`)),
  properties: ix.properties(),
  tip: ix.tip()
})

/** Money invariant: per property, balances sum to granted minus revoked. */
const assertConserved = (ix: OmniIndexer) => {
  for (const p of ix.properties()) {
    const sum = ix.balances().filter((b) => b.property === p.id).reduce((s, b) => s + b.amount, 0n)
    expect(sum).toBe(p.totalTokens)
  }
  for (const b of ix.balances()) expect(b.amount > 0n).toBe(true)
}

const setup = () => {
  const ix = new OmniIndexer({ params })
  const a = funded(alice, 20)
  const b = funded(bob, 20)
  unwrap(ix.apply(blockAt(1, [a.fundingHex, b.fundingHex])))
  return { ix, a, b }
}

describe("OmniIndexer", () => {
  it("create → grant → send moves balances; ids start at 3 (main) and 2^31+3 (test)", () => {
    const { ix, a } = setup()
    const [created] = unwrap(ix.apply(blockAt(2, [a.omni(create("Shardline USD")), a.omni(create("Test token", 2))])))
    expect(created).toMatchObject({ valid: true, propertyId: FIRST_MAIN_PROPERTY_ID, sender: alice.address })
    expect(ix.properties().map((p) => [p.id, p.name, p.issuer])).toEqual([
      [3, "Shardline USD", alice.address],
      [FIRST_TEST_PROPERTY_ID, "Test token", alice.address]
    ])
    const records = unwrap(ix.apply(blockAt(3, [a.omni(grant(3, 1_000_000n)), a.omni(grant(3, 5_000n), carol.address), a.omni(send(3, 250_000n), bob.address)])))
    expect(records.map((r) => r.valid)).toEqual([true, true, true])
    expect(records[2]).toMatchObject({ sender: alice.address, reference: bob.address })
    expect(ix.balance(alice.address, 3)).toBe(750_000n)
    expect(ix.balance(bob.address, 3)).toBe(250_000n)
    expect(ix.balance(carol.address, 3)).toBe(5_000n) // a grant credits the reference, as Omni Core does
    expect(ix.property(3)!.totalTokens).toBe(1_005_000n)
    unwrap(ix.apply(blockAt(4, [a.omni(revoke(3, 5_000n))])))
    expect(ix.balance(alice.address, 3)).toBe(745_000n)
    expect(ix.property(3)!.totalTokens).toBe(1_000_000n)
    assertConserved(ix)
  })

  it("invalid transactions leave balances untouched and are recorded with a reason", () => {
    const { ix, a, b } = setup()
    unwrap(ix.apply(blockAt(2, [a.omni(create("USD")), a.omni(grant(3, 100n)), a.omni(send(3, 40n), bob.address)])))
    const before = snapshot(ix)
    const stamp = unwrap(buildStamp(params, { inputs: [a.take()], signer: alice, data: Uint8Array.of(0x6f, 0x6d, 0x6e, 0x69, 0, 0, 0, 99), changeAddress: alice.address })).hex
    const records = unwrap(
      ix.apply(
        blockAt(3, [
          b.omni(send(3, 41n), carol.address), // bob has 40
          b.omni(send(99, 1n), carol.address), // no property 99
          b.omni(grant(3, 1_000n), bob.address), // bob is not the issuer
          b.omni(revoke(3, 1n)), // nor may he revoke
          a.omni(revoke(3, 61n)), // alice has 60
          stamp // type 99 is not a payload we know
        ])
      )
    )
    expect(records.map((r) => [r.valid, r.reason])).toEqual([
      [false, `sender ${bob.address} has 40 of property 3, needs 41`],
      [false, "property 99 does not exist"],
      [false, `sender ${bob.address} is not the issuer of property 3`],
      [false, `sender ${bob.address} is not the issuer of property 3`],
      [false, `issuer ${alice.address} has 60 of property 3, cannot revoke 61`],
      [false, "bad payload: unsupported Omni transaction type 99"]
    ])
    expect({ ...snapshot(ix), tip: before.tip }).toEqual(before)
    expect(ix.tip()!.height).toBe(3)
    assertConserved(ix)
  })

  it("a send with no reference output goes to the sender", () => {
    const { ix, a } = setup()
    unwrap(ix.apply(blockAt(2, [a.omni(create("USD")), a.omni(grant(3, 100n))])))
    const [r] = unwrap(ix.apply(blockAt(3, [a.omni(send(3, 30n))])))
    expect(r).toMatchObject({ valid: true, sender: alice.address, reference: alice.address })
    expect(ix.balance(alice.address, 3)).toBe(100n)
    // The reference rule itself: one output → it; change first → skipped; highest vout wins.
    expect(referenceOf([], alice.address)).toBeUndefined()
    expect(referenceOf([bob.address], alice.address)).toBe(bob.address)
    expect(referenceOf([alice.address, carol.address, bob.address], alice.address)).toBe(bob.address)
    expect(referenceOf([bob.address, alice.address], alice.address)).toBe(bob.address)
    expect(referenceOf([carol.address, bob.address], alice.address)).toBe(bob.address)
  })

  it("a reorg restores balances, properties and id numbering exactly", () => {
    const { ix, a, b } = setup()
    unwrap(ix.apply(blockAt(2, [a.omni(create("USD")), a.omni(grant(3, 1_000n)), a.omni(send(3, 300n), bob.address)])))
    const atFork = snapshot(ix)
    // Branch A: bob spends, alice creates another property and grants more.
    unwrap(ix.apply(blockAt(3, [b.omni(send(3, 100n), carol.address), a.omni(create("EUR"))])))
    unwrap(ix.apply(blockAt(4, [a.omni(grant(4, 50n), carol.address), a.omni(revoke(3, 200n))])))
    expect(ix.balance(carol.address, 3)).toBe(100n)
    expect(ix.properties()).toHaveLength(2)
    expect(unwrap(ix.rollbackTo(2))).toBe(2)
    expect(snapshot(ix)).toEqual(atFork)
    expect(ix.balance(carol.address, 4)).toBe(0n)
    // Branch B: the next property gets id 4 again, and bob's coins are spendable again.
    const [eur] = unwrap(ix.apply(blockAt(3, [a.omni(create("JPY"))], "b")))
    expect(eur!.propertyId).toBe(4)
    expect(ix.property(4)!.name).toBe("JPY")
    unwrap(ix.apply(blockAt(4, [b.omni(send(3, 300n), carol.address)], "b")))
    expect(ix.balance(carol.address, 3)).toBe(300n)
    expect(ix.balance(bob.address, 3)).toBe(0n)
    assertConserved(ix)
    // Unwinding everything leaves the state of the start.
    unwrap(ix.rollbackTo(0))
    expect(ix.tip()).toBeUndefined()
    expect(ix.balances()).toEqual([])
    expect(ix.properties()).toEqual([])
  })

  it("tracks prevouts across blocks: a tx spending an Omni tx's change has that sender", () => {
    const { ix, a } = setup()
    const first = unwrap(buildOmni(params, { inputs: [a.take()], signer: alice, payload: create("USD"), changeAddress: alice.address }))
    const change: Utxo = { txid: first.txid, vout: 1, value: 100_000n - first.fee, script: alice.script, prevTxHex: first.hex }
    const second = unwrap(buildOmni(params, { inputs: [change], signer: alice, payload: grant(3, 7n), changeAddress: alice.address }))
    unwrap(ix.apply(blockAt(2, [first.hex, second.hex]))) // same block, in order
    expect(ix.balance(alice.address, 3)).toBe(7n)
  })

  it("refuses a tx whose inputs it cannot resolve or that are not P2PKH/P2SH", () => {
    const { ix } = setup()
    const stranger = fund(carol.script, [100_000n]).utxos // never applied to the indexer
    const hex = unwrap(buildOmni(params, { inputs: stranger, signer: carol, payload: create("X"), changeAddress: carol.address })).hex
    const [r] = unwrap(ix.apply(blockAt(2, [hex])))
    expect(r!.valid).toBe(false)
    expect(r!.reason).toMatch(/an output the indexer has not seen/)
    // With a resolver for pre-start outputs the same tx is valid.
    const ix2 = new OmniIndexer({ params, resolvePrevout: (txid, vout) => (txid === stranger[0]!.txid && vout === 0 ? carol.script : undefined) })
    const [r2] = unwrap(ix2.apply(blockAt(10, [hex])))
    expect(r2).toMatchObject({ valid: true, propertyId: 3, sender: carol.address })
    // An input paid to a bare OP_TRUE-like script (not P2PKH/P2SH) invalidates the tx.
    const odd = fund(Uint8Array.of(0x51), [100_000n])
    const omniData = nullDataScript(Uint8Array.of(0x6f, 0x6d, 0x6e, 0x69, ...unwrap(encodeOmniPayload(create("Y")))))
    const raw = unwrap(signUnchecked(params, odd.utxos, [{ script: omniData, value: 0n }], carol)).hex
    unwrap(ix2.apply(blockAt(11, [odd.tx.toHex()])))
    const [r3] = unwrap(ix2.apply(blockAt(12, [raw])))
    expect(r3!.reason).toMatch(/neither P2PKH nor P2SH/)
  })

  it("refuses out-of-order and malformed blocks whole; the reorg window is bounded", () => {
    const ix = new OmniIndexer({ params, maxReorgDepth: 2 })
    const a = funded(alice, 5)
    unwrap(ix.apply(blockAt(1, [a.fundingHex])))
    expect(Either.isLeft(ix.apply(blockAt(3, [])))).toBe(true)
    const bad = ix.apply(blockAt(2, [a.omni(create("USD")), "00zz"]))
    expect(Either.isRight(bad) ? "" : bad.left.message).toMatch(/^block 2 tx 1 does not parse/)
    expect(ix.properties()).toEqual([]) // nothing from the bad block was applied
    unwrap(ix.apply(blockAt(2, [])))
    unwrap(ix.apply(blockAt(3, [])))
    const deep = ix.rollbackTo(0)
    expect(Either.isRight(deep) ? "" : deep.left.message).toMatch(/reorg window/)
    expect(unwrap(ix.rollbackTo(1))).toBe(2)
    // Block 1 left the window, but it is still the tip: the chain continues from it.
    expect(ix.tip()).toEqual({ height: 1, hash: blockAt(1, []).hash })
    expect(Either.isLeft(ix.rollback())).toBe(true)
    expect(Either.isLeft(ix.apply(blockAt(3, [])))).toBe(true)
    unwrap(ix.apply(blockAt(2, [], "b")))
    expect(ix.tip()!.height).toBe(2)
  })
})
