// End to end on the in-process devnet: builder transactions pass its mempool policy, are mined,
// and the Omni indexer follows the blocks (with the ledger's follower) across a reorg.
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { makeUtxoDevnet } from "../../../src/chain/ledger/devnet.ts"
import { syncOnce } from "../../../src/chain/ledger/follower.ts"
import type { LedgerUtxo } from "../../../src/chain/ledger/UtxoLedger.ts"
import { OmniIndexer } from "../../../src/chain/omni/indexer.ts"
import type { OmniPayload } from "../../../src/chain/omni/codec.ts"
import { buildOmni, buildSend, buildStamp, type BuiltTx } from "../../../src/chain/txBuilder.ts"
import { params, unwrap, wallet } from "./fixtures.ts"

const alice = wallet(21)
const bob = wallet(22)
const devnet = makeUtxoDevnet({ params })
const { ledger } = devnet
afterAll(() => devnet.close())
const run = <A, E>(e: Effect.Effect<A, E>): Promise<A> => Effect.runPromise(e)

describe("builder + devnet + indexer", () => {
  it("policy accepts what the builder makes; the indexer follows blocks and a reorg", async () => {
    await run(ledger.mine(6, alice.address))
    await run(ledger.mine(params.coinbaseMaturity, bob.address))
    const coins: LedgerUtxo[] = [...(await run(ledger.listUnspent([alice.address])))]
    expect(coins.length).toBe(6)
    const broadcast = async (built: BuiltTx): Promise<void> => {
      const accept = await run(ledger.testAccept(built.hex))
      expect(accept).toMatchObject({ allowed: true, txid: built.txid, fee: built.fee, vsize: built.vsize })
      expect(await run(ledger.broadcast(built.hex))).toBe(built.txid)
    }
    const omni = (payload: OmniPayload, reference?: string) =>
      unwrap(buildOmni(params, { inputs: [coins.shift()!], signer: alice, payload, changeAddress: alice.address, ...(reference === undefined ? {} : { reference }) }))

    await broadcast(omni({ type: "createManaged", ecosystem: 1, divisible: true, previousPropertyId: 0, category: "", subcategory: "", name: "Shardline USD", url: "", data: "" }))
    await run(ledger.mine(1, bob.address))
    await broadcast(omni({ type: "grant", property: 3, amount: 1_000n, memo: "" }))
    await broadcast(unwrap(buildStamp(params, { inputs: [coins.shift()!], signer: alice, data: new Uint8Array(80).fill(1), changeAddress: alice.address })))
    await broadcast(unwrap(buildSend(params, { inputs: [coins.shift()!], signer: alice, outputs: [{ address: bob.address, value: params.dustSats }], changeAddress: alice.address })))
    await run(ledger.mine(1, bob.address))
    await broadcast(omni({ type: "simpleSend", property: 3, amount: 400n }, bob.address))
    await run(ledger.mine(1, bob.address))

    const ix = new OmniIndexer({ params })
    const first = await run(syncOnce(ledger, ix))
    expect(first.caughtUp).toBe(true)
    expect(ix.balance(alice.address, 3)).toBe(600n)
    expect(ix.balance(bob.address, 3)).toBe(400n)

    // The block with the send is replaced by an empty one: the send is gone.
    await run(devnet.faults.reorg({ depth: 1, orphanedTxs: "drop" }))
    const second = await run(syncOnce(ledger, ix))
    expect(second.rolledBack).toBe(1)
    expect(ix.balance(alice.address, 3)).toBe(1_000n)
    expect(ix.balance(bob.address, 3)).toBe(0n)
    expect(ix.tip()).toEqual({ height: second.tip!.height, hash: second.tip!.hash })
  })
})
