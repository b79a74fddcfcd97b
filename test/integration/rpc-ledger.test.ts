// The shared UtxoLedger contract on the JSON-RPC adapter against a real litecoind -regtest,
// started and stopped by this file. Addresses stay in the ledger format (0x42 "T…"); the
// adapter converts only for generatetoaddress.
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { convertAddress } from "../../src/chain/address.ts"
import { syncOnce } from "../../src/chain/ledger/follower.ts"
import { layerRpc, makeRpcLedger } from "../../src/chain/ledger/rpcLedger.ts"
import { spendable, UtxoLedger } from "../../src/chain/ledger/UtxoLedger.ts"
import { OmniIndexer } from "../../src/chain/omni/indexer.ts"
import { ledgerParams, litecoinRegtestParams } from "../../src/chain/params.ts"
import { buildSend } from "../../src/chain/txBuilder.ts"
import { startLitecoind, type Litecoind } from "../support/litecoind.ts"
import { failure, ok, run, testWallet, utxoLedgerContract } from "../support/utxoLedgerContract.ts"

utxoLedgerContract("rpc, litecoind -regtest", async () => {
  const node = await startLitecoind()
  // Built the way the app builds it: the layer, with the credentials in the URL.
  const url = new URL(node.url)
  url.username = "u"
  url.password = "p"
  const ledger = await Effect.runPromise(Effect.provide(UtxoLedger, layerRpc({ url: url.toString(), params: ledgerParams, nodeParams: litecoinRegtestParams })))
    .catch(async (e: unknown) => { await node.stop(); throw e })
  return { ledger, close: node.stop }
})

// A real reorg on litecoind (invalidateblock), seen through the port by the follower, and the
// address conversion at the adapter's edge checked against the node's own view.
describe("rpc ledger on litecoind: reorg and address edge", () => {
  let node: Litecoind
  beforeAll(async () => { node = await startLitecoind() })
  afterAll(async () => { await node?.stop() })

  it("the follower rolls back blocks the node abandoned; a tx in them is unconfirmed again", async () => {
    const ledger = makeRpcLedger({ url: node.url, username: "u", password: "p", params: ledgerParams, nodeParams: litecoinRegtestParams })
    const alice = testWallet(0x11, ledger)
    const other = testWallet(0x66, ledger)
    await run(ledger.mine(101, alice.address))
    const [input] = spendable(await run(ledger.listUnspent([alice.address])), ledger.params)
    const tx = ok(buildSend(ledger.params, { inputs: [input!], signer: { privateKey: alice.privateKey }, changeAddress: alice.address, outputs: [{ address: other.address, value: 100_000_000n }] }))
    await run(ledger.broadcast(tx.hex))
    const [txBlock] = await run(ledger.mine(1, alice.address))
    await run(ledger.mine(1, alice.address))
    const copy = new OmniIndexer({ params: ledger.params })
    await run(syncOnce(ledger, copy))
    expect((await run(ledger.getTx(tx.txid))).confirmations).toBe(2)

    await node.rpc("invalidateblock", txBlock)
    expect(await run(ledger.getTx(tx.txid))).toMatchObject({ confirmations: 0, blockHash: undefined })
    const replaced = await run(ledger.mine(3, other.address))
    const report = await run(syncOnce(ledger, copy))
    expect(report).toMatchObject({ rolledBack: 2, applied: 3, caughtUp: true })
    expect(copy.tip()).toEqual({ height: 104, hash: replaced[2] })
    // The node put the abandoned tx back in its mempool and mined it into the new branch.
    expect((await run(ledger.getTx(tx.txid))).confirmations).toBe(3)
  })

  it("a ledger T-address reaches the node as the same hash160 in the node's format", async () => {
    const ours = makeRpcLedger({ url: node.url, username: "u", password: "p", params: ledgerParams, nodeParams: litecoinRegtestParams })
    const native = makeRpcLedger({ url: node.url, username: "u", password: "p", params: litecoinRegtestParams, nodeParams: litecoinRegtestParams })
    const dave = testWallet(0x77, ours)
    const daveAtNode = ok(convertAddress(dave.address, ledgerParams, litecoinRegtestParams))
    expect(dave.address).toMatch(/^T/)
    expect(daveAtNode).toBe(testWallet(0x77, native).address)
    const [hash] = await run(ours.mine(1, dave.address))
    // The node's own scan by its own address finds the coinbase we mined to the T-address.
    const scan = await node.rpc<{ unspents: Array<{ txid: string }> }>("scantxoutset", "start", [`addr(${daveAtNode})`])
    const coins = await run(ours.listUnspent([dave.address]))
    expect(scan.unspents.map((u) => u.txid)).toEqual(coins.map((u) => u.txid))
    expect(coins).toHaveLength(1)
    expect((await run(ours.blockAt(coins[0]!.height))).hash).toBe(hash)
    // A ledger built with the node's params sees the same coins under the node's address.
    expect(await run(native.listUnspent([daveAtNode]))).toEqual(coins)
    // Each ledger refuses the other's address format at the port.
    expect(await failure(ours.listUnspent([daveAtNode]))).toMatchObject({ _tag: "LedgerInvalidInput", field: "owners[0]" })
    expect(await failure(native.mine(1, dave.address))).toMatchObject({ _tag: "LedgerInvalidInput", field: "toAddress" })
  })
})
