// The UtxoLedger contract: every implementation (in-process devnet, JSON-RPC against litecoind
// -regtest) must pass these tests. A file calls `utxoLedgerContract(name, factory)`; the factory
// builds a fresh chain at height 0. The tests run in order and share the chain: they mine to
// their own keys, spend with the shared builder and read everything back through the port.
import { payments, script as bscript, Transaction } from "bitcoinjs-lib"
import { ECPairFactory } from "ecpair"
import { Cause, Effect, Either, Exit, Option } from "effect"
import * as ecc from "tiny-secp256k1"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { p2pkhAddressOfPubkey } from "../../src/chain/address.ts"
import { syncOnce } from "../../src/chain/ledger/follower.ts"
import { LedgerBlockNotFound, LedgerTxNotFound, spendable, type LedgerUtxo, type UtxoLedgerShape } from "../../src/chain/ledger/UtxoLedger.ts"
import { OmniIndexer } from "../../src/chain/omni/indexer.ts"
import { buildOmni, buildSend, buildStamp, nullDataScript, signUnchecked, type BuiltTx, type Utxo } from "../../src/chain/txBuilder.ts"
import { unwrap } from "../../harness/either.ts"

export interface UtxoLedgerHarness {
  readonly ledger: UtxoLedgerShape
  readonly close: () => Promise<void>
}

export type UtxoLedgerFactory = () => Promise<UtxoLedgerHarness>

const ECPair = ECPairFactory(ecc)

export interface TestWallet {
  readonly privateKey: Uint8Array
  readonly publicKey: Uint8Array
  readonly address: string
  readonly script: Uint8Array
}

export const testWallet = (fill: number, ledger: UtxoLedgerShape): TestWallet => {
  const privateKey = new Uint8Array(32).fill(fill)
  const publicKey = ECPair.fromPrivateKey(privateKey).publicKey
  const address = unwrap(p2pkhAddressOfPubkey(publicKey, ledger.params))
  return { privateKey, publicKey, address, script: payments.p2pkh({ pubkey: publicKey }).output! }
}

export const run = <A, E>(effect: Effect.Effect<A, E>): Promise<A> => Effect.runPromise(effect)

/** The typed failure of an effect; fails the test on success or on a defect. */
export const failure = async <A, E>(effect: Effect.Effect<A, E>): Promise<E> => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) throw new Error(`expected a typed failure, got success: ${String(exit.value)}`)
  const error = Cause.failureOption(exit.cause)
  if (Option.isNone(error)) throw new Error(`expected a typed failure, got a defect: ${Cause.pretty(exit.cause)}`)
  return error.value
}

export const ok = unwrap

const COIN = 100_000_000n

export const utxoLedgerContract = (implementation: string, factory: UtxoLedgerFactory): void => {
  describe(`UtxoLedger contract (${implementation})`, () => {
    let h: UtxoLedgerHarness
    let ledger: UtxoLedgerShape
    let alice: TestWallet
    let bob: TestWallet
    let carol: TestWallet
    let burn: TestWallet
    /** Alice's three coinbases, oldest first. */
    let coinbases: ReadonlyArray<LedgerUtxo>
    let startHeight: number

    const unspent = async (w: TestWallet): Promise<ReadonlyArray<LedgerUtxo>> => run(ledger.listUnspent([w.address]))
    const mine = async (n: number, to: TestWallet = burn) => run(ledger.mine(n, to.address))
    /** Spendable outputs of `w` minus those in `exclude` (spent by a mempool tx). */
    const coins = async (w: TestWallet, exclude: ReadonlyArray<string> = []): Promise<ReadonlyArray<Utxo>> =>
      spendable(await unspent(w), ledger.params).filter((u) => !exclude.includes(`${u.txid}:${u.vout}`))
    const send = (from: TestWallet, inputs: ReadonlyArray<Utxo>, to: TestWallet, value: bigint): BuiltTx =>
      ok(buildSend(ledger.params, { inputs, signer: { privateKey: from.privateKey }, changeAddress: from.address, outputs: [{ address: to.address, value }] }))
    const raw = (from: TestWallet, inputs: ReadonlyArray<Utxo>, outputs: ReadonlyArray<{ script: Uint8Array; value: bigint }>) =>
      ok(signUnchecked(ledger.params, inputs, outputs, { privateKey: from.privateKey }))
    const refusal = async (hex: string) => {
      const r = await run(ledger.testAccept(hex))
      if (r.allowed) throw new Error("expected testAccept to refuse the transaction")
      return r
    }

    beforeAll(async () => {
      h = await factory()
      ledger = h.ledger
      alice = testWallet(0x11, ledger)
      bob = testWallet(0x22, ledger)
      carol = testWallet(0x33, ledger)
      burn = testWallet(0x44, ledger)
      startHeight = (await run(ledger.tip)).height
    })
    afterAll(async () => {
      await h?.close()
    })

    it("mines to an address; tip, blocks and unspent outputs agree", async () => {
      const hashes = await mine(3, alice)
      expect(hashes).toHaveLength(3)
      const tip = await run(ledger.tip)
      expect(tip).toEqual({ height: startHeight + 3, hash: hashes[2] })
      const page = await run(ledger.blocks(startHeight + 1, 3))
      expect(page.blocks.map((b) => b.hash)).toEqual(hashes)
      expect(page.nextHeight).toBe(startHeight + 4)
      expect(page.blocks[1]!.prevHash).toBe(hashes[0])
      for (const b of page.blocks) {
        const coinbase = Transaction.fromHex(b.txs[0]!)
        expect(coinbase.isCoinbase()).toBe(true)
        expect(Buffer.from(coinbase.outs[0]!.script).equals(Buffer.from(alice.script))).toBe(true)
      }
      coinbases = await unspent(alice)
      expect(coinbases.map((u) => [u.coinbase, u.confirmations])).toEqual([[true, 3], [true, 2], [true, 1]])
      // Amounts come from the coinbase itself (regtest halves every 150 blocks).
      expect(coinbases[0]!.value).toBe(Transaction.fromHex(page.blocks[0]!.txs[0]!).outs[0]!.value)
      expect(coinbases[0]!.value).toBeGreaterThan(10n * COIN)
      // By script as well as by address; an unused address has nothing.
      expect(await run(ledger.listUnspent([alice.script]))).toHaveLength(3)
      expect(await unspent(carol)).toEqual([])
    })

    it("reports an unknown txid and a height above the tip as typed not-found errors", async () => {
      const unknown = "ab".repeat(32)
      expect(await failure(ledger.getTx(unknown))).toEqual(new LedgerTxNotFound({ txid: unknown }))
      const tip = await run(ledger.tip)
      expect(await failure(ledger.blockAt(tip.height + 1))).toEqual(new LedgerBlockNotFound({ height: tip.height + 1 }))
      expect((await run(ledger.blockAt(tip.height))).hash).toBe(tip.hash)
    })

    it("refuses to spend a coinbase before 100 confirmations", async () => {
      await mine(97)
      const [first, second, third] = await unspent(alice)
      expect([first!.confirmations, second!.confirmations, third!.confirmations]).toEqual([100, 99, 98])
      expect(spendable(await unspent(alice), ledger.params)).toHaveLength(1)
      const early = send(alice, [second!], bob, COIN)
      expect((await refusal(early.hex)).code).toBe("immature-coinbase")
      const rejected = await failure(ledger.broadcast(early.hex))
      expect(rejected).toMatchObject({ _tag: "LedgerTxRejected", code: "immature-coinbase", txid: early.txid })
      expect(await run(ledger.testAccept(send(alice, [first!], bob, COIN).hex))).toMatchObject({ allowed: true })
      await mine(1)
      expect(await run(ledger.testAccept(early.hex))).toMatchObject({ allowed: true, txid: early.txid })
    })

    it("accepts a P2PKH send with change; the txid is ours; confirmations go 0 → 1 → 6", async () => {
      const [input] = await coins(alice)
      const tx = send(alice, [input!], bob, COIN)
      expect(tx.fee).toBeGreaterThanOrEqual(BigInt(tx.vsize) * ledger.params.minFeeRateSatPerVb)
      const accept = await run(ledger.testAccept(tx.hex))
      expect(accept).toEqual({ allowed: true, txid: tx.txid, vsize: tx.vsize, fee: tx.fee })
      const txid = await run(ledger.broadcast(tx.hex))
      expect(txid).toBe(tx.txid)
      expect(txid).toBe(Transaction.fromHex(tx.hex).getId())
      expect(await run(ledger.getTx(txid))).toEqual({ txid, hex: tx.hex, confirmations: 0, blockHash: undefined, blockHeight: undefined })
      // Broadcasting again while it waits is harmless; unconfirmed outputs are not listed yet.
      expect(await run(ledger.broadcast(tx.hex))).toBe(txid)
      expect(await unspent(bob)).toEqual([])
      const [block] = await mine(1)
      const tip = await run(ledger.tip)
      expect(await run(ledger.getTx(txid))).toMatchObject({ confirmations: 1, blockHash: block, blockHeight: tip.height })
      const page = await run(ledger.blocks(tip.height, 1))
      expect(page.blocks[0]!.txs).toContain(tx.hex)
      // blockAt is the same block: the one the tx was mined in, coinbase first.
      const mined = await run(ledger.blockAt(tip.height))
      expect(mined).toEqual(page.blocks[0])
      expect(mined.hash).toBe(block)
      expect(mined.txs.indexOf(tx.hex)).toBeGreaterThan(0)
      await mine(5)
      expect((await run(ledger.getTx(txid))).confirmations).toBe(6)
      const paid = await unspent(bob)
      expect(paid.map((u) => [u.txid, u.vout, u.value, u.confirmations, u.coinbase])).toEqual([[txid, 0, COIN, 6, false]])
      const change = (await unspent(alice)).find((u) => u.txid === txid)
      expect(change?.value).toBe(input!.value - COIN - tx.fee)
      // In a block now: sending it again is refused as known.
      expect(await failure(ledger.broadcast(tx.hex))).toMatchObject({ _tag: "LedgerTxRejected", code: "already-known" })
    })

    it("takes an 80-byte OP_RETURN; 81 bytes are refused by the builder and by the ledger, as are two OP_RETURNs", async () => {
      const [input] = await coins(alice)
      const stamp = (bytes: number) =>
        buildStamp(ledger.params, { inputs: [input!], signer: { privateKey: alice.privateKey }, changeAddress: alice.address, data: new Uint8Array(bytes).fill(0x43) })
      expect(await run(ledger.testAccept(ok(stamp(80)).hex))).toMatchObject({ allowed: true })
      const tooLong = stamp(81)
      expect(Either.isLeft(tooLong)).toBe(true)
      if (Either.isLeft(tooLong)) expect(tooLong.left.message).toMatch(/81 bytes.*80/)
      const change = { script: alice.script, value: input!.value - 10_000n }
      const raw81 = raw(alice, [input!], [{ script: nullDataScript(new Uint8Array(81)), value: 0n }, change])
      expect((await refusal(raw81.hex)).code).toBe("nonstandard-script")
      expect(await failure(ledger.broadcast(raw81.hex))).toMatchObject({ _tag: "LedgerTxRejected", code: "nonstandard-script" })
      const two = raw(alice, [input!], [{ script: nullDataScript(new Uint8Array(20)), value: 0n }, { script: nullDataScript(new Uint8Array(20)), value: 0n }, change])
      expect((await refusal(two.hex)).code).toBe("multi-op-return")
    })

    it("refuses dust below 5460 sat and a fee below 1 sat/vB", async () => {
      const [input] = await coins(alice)
      const change = (paid: bigint, fee: bigint) => ({ script: alice.script, value: input!.value - paid - fee })
      const dust = raw(alice, [input!], [{ script: bob.script, value: ledger.params.dustSats - 1n }, change(ledger.params.dustSats - 1n, 1_000n)])
      expect((await refusal(dust.hex)).code).toBe("dust")
      expect(await failure(ledger.broadcast(dust.hex))).toMatchObject({ _tag: "LedgerTxRejected", code: "dust" })
      const atLimit = raw(alice, [input!], [{ script: bob.script, value: ledger.params.dustSats }, change(ledger.params.dustSats, 1_000n)])
      expect(await run(ledger.testAccept(atLimit.hex))).toMatchObject({ allowed: true })
      expect(Either.isLeft(buildSend(ledger.params, { inputs: [input!], signer: { privateKey: alice.privateKey }, changeAddress: alice.address, outputs: [{ address: bob.address, value: 5_459n }] }))).toBe(true)
      const noFee = raw(alice, [input!], [{ script: bob.script, value: COIN }, change(COIN, 0n)])
      expect((await refusal(noFee.hex)).code).toBe("fee-too-low")
      // 1 sat/vB exactly is enough: a fee equal to the size.
      const vsize = Transaction.fromHex(noFee.hex).virtualSize()
      const exact = raw(alice, [input!], [{ script: bob.script, value: COIN }, change(COIN, BigInt(vsize))])
      expect(await run(ledger.testAccept(exact.hex))).toMatchObject({ allowed: true, fee: BigInt(vsize) })
    })

    it("refuses a double spend in the mempool, and after confirmation as a missing input", async () => {
      const [input] = await coins(alice)
      const first = send(alice, [input!], bob, COIN)
      const second = send(alice, [input!], carol, COIN)
      expect(await run(ledger.broadcast(first.hex))).toBe(first.txid)
      expect((await refusal(second.hex)).code).toBe("double-spend")
      expect(await failure(ledger.broadcast(second.hex))).toMatchObject({ _tag: "LedgerTxRejected", code: "double-spend", txid: second.txid })
      await mine(1)
      expect((await refusal(second.hex)).code).toBe("missing-inputs")
      expect(await failure(ledger.broadcast(second.hex))).toMatchObject({ code: "missing-inputs" })
      // A spent output is gone from the UTXO set.
      expect((await unspent(alice)).some((u) => u.txid === input!.txid && u.vout === input!.vout)).toBe(false)
    })

    it("broadcastMany takes a parent and its child in order in one call, and answers each apart", async () => {
      const [input] = await coins(alice)
      const parent = send(alice, [input!], bob, COIN)
      const out = Transaction.fromHex(parent.hex).outs
      const vout = out.findIndex((o) => Buffer.from(o.script).equals(Buffer.from(alice.script)))
      const change: Utxo = { txid: parent.txid, vout, value: out[vout]!.value, script: alice.script, prevTxHex: parent.hex }
      const child = send(alice, [change], carol, COIN)
      // The same coin as the child, to bob: the mempool already has the child spending it.
      const conflict = send(alice, [change], bob, COIN)
      const results = await run(ledger.broadcastMany([parent.hex, child.hex, conflict.hex, "nothex", parent.hex]))
      expect(results.slice(0, 2)).toEqual([Either.right(parent.txid), Either.right(child.txid)])
      expect(results[2]).toMatchObject({ left: { _tag: "LedgerTxRejected", code: "double-spend", txid: conflict.txid } })
      expect(results[3]).toMatchObject({ left: { _tag: "LedgerInvalidInput", field: "hex" } })
      // Sending a mempool transaction again is harmless, as with broadcast.
      expect(results[4]).toEqual(Either.right(parent.txid))
      expect(await run(ledger.broadcastMany([]))).toEqual([])
      expect((await run(ledger.getTx(child.txid))).confirmations).toBe(0)
      await mine(1)
      expect((await run(ledger.getTx(child.txid))).confirmations).toBe(1)
    })

    it("refuses forged and tampered signatures", async () => {
      const [input] = await coins(alice)
      const good = Transaction.fromHex(send(alice, [input!], bob, COIN).hex)
      // Signed by bob's key but presenting alice's public key: hash160 matches, ECDSA does not.
      const forged = good.clone()
      const hash = forged.hashForSignature(0, input!.script, Transaction.SIGHASH_ALL)
      const bobSig = bscript.signature.encode(ECPair.fromPrivateKey(bob.privateKey).sign(hash, true), Transaction.SIGHASH_ALL)
      forged.setInputScript(0, bscript.compile([bobSig, alice.publicKey]))
      expect((await refusal(forged.toHex())).code).toBe("bad-signature")
      expect(await failure(ledger.broadcast(forged.toHex()))).toMatchObject({ _tag: "LedgerTxRejected", code: "bad-signature" })
      // Alice's valid signature, but an output changed after signing.
      const tampered = good.clone()
      tampered.outs[0]!.value = COIN - 1_000n
      expect((await refusal(tampered.toHex())).code).toBe("bad-signature")
      // Bob's own key over alice's output: the key does not hash to the prevout.
      const wrongKey = good.clone()
      wrongKey.setInputScript(0, bscript.compile([bobSig, bob.publicKey]))
      expect((await refusal(wrongKey.toHex())).code).toBe("bad-signature")
    })

    it("carries Omni class C transactions the indexer decodes from the ledger's blocks", async () => {
      const omni = async (from: TestWallet, payload: Parameters<typeof buildOmni>[1]["payload"], reference?: TestWallet): Promise<string> => {
        // The largest coin: a dust-sized Omni reference output cannot pay a fee.
        const inputs = [...(await coins(from))].sort((a, b) => (a.value < b.value ? 1 : a.value > b.value ? -1 : 0)).slice(0, 1)
        const built = ok(buildOmni(ledger.params, {
          inputs,
          signer: { privateKey: from.privateKey },
          changeAddress: from.address,
          payload,
          ...(reference === undefined ? {} : { reference: reference.address })
        }))
        expect(await run(ledger.broadcast(built.hex))).toBe(built.txid)
        // One block each: Omni applies transactions in block order, and a node may reorder a block.
        await mine(1)
        return built.txid
      }
      const create = await omni(alice, {
        type: "createManaged", ecosystem: 1, divisible: true, previousPropertyId: 0,
        category: "desk", subcategory: "usd", name: "Shardline USD", url: "", data: ""
      })
      const grantBob = await omni(alice, { type: "grant", property: 3, amount: 1_000n * COIN, memo: "" }, bob)
      const grantSelf = await omni(alice, { type: "grant", property: 3, amount: 200n * COIN, memo: "" })
      const sendCarol = await omni(bob, { type: "simpleSend", property: 3, amount: 300n * COIN }, carol)
      const overdraw = await omni(bob, { type: "simpleSend", property: 3, amount: 5_000n * COIN }, carol)
      const unknown = await omni(bob, { type: "simpleSend", property: 999, amount: 1n }, carol)
      const revoke = await omni(alice, { type: "revoke", property: 3, amount: 50n * COIN, memo: "" })

      const indexer = new OmniIndexer({ params: ledger.params })
      const report = await run(syncOnce(ledger, indexer, { startHeight: 0 }))
      const tip = await run(ledger.tip)
      expect(report).toMatchObject({ caughtUp: true, rolledBack: 0, applied: tip.height + 1 })
      expect(indexer.tip()).toEqual(tip)
      const property = indexer.property(3)
      expect(property).toMatchObject({ issuer: alice.address, name: "Shardline USD", divisible: true, totalTokens: 1_150n * COIN, txid: create })
      expect(indexer.balance(bob.address, 3)).toBe(700n * COIN)
      expect(indexer.balance(carol.address, 3)).toBe(300n * COIN)
      expect(indexer.balance(alice.address, 3)).toBe(150n * COIN)
      const records = new Map(indexer.recentTransactions().map((r) => [r.txid, r] as const))
      for (const txid of [create, grantBob, grantSelf, sendCarol, revoke]) expect(records.get(txid)?.valid).toBe(true)
      expect(records.get(sendCarol)).toMatchObject({ sender: bob.address, reference: carol.address })
      expect(records.get(overdraw)).toMatchObject({ valid: false, sender: bob.address })
      expect(records.get(unknown)).toMatchObject({ valid: false })
      // Nothing new: a second sync applies nothing.
      expect(await run(syncOnce(ledger, indexer))).toMatchObject({ applied: 0, rolledBack: 0, caughtUp: true })
      // Invariant: the balances of a property add up to its supply.
      expect(indexer.balances().filter((b) => b.property === 3).reduce((n, b) => n + b.amount, 0n)).toBe(property!.totalTokens)
    })
  })
}
