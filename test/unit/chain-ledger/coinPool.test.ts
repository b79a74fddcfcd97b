// The coins of a wallet that spends its own unconfirmed change, over a real devnet: what the
// ledger lists plus our pending change minus what we spent, ancestor counts, no phantom coin from
// a transaction already in a block, and the in-memory pool that chains payments within a block.
import { afterEach, describe, expect, it } from "vitest"
import { CoinPool, coinsOf, outpointOf, poolOf, spendingOrder } from "../../../src/chain/ledger/coinPool.ts"
import { makeUtxoDevnet, type UtxoDevnetHandle } from "../../../src/chain/ledger/devnet.ts"
import { buildSend } from "../../../src/chain/txBuilder.ts"
import { ledgerParams as params } from "../../../src/chain/params.ts"
import { ok, run, testWallet } from "../../support/utxoLedgerContract.ts"

const open: Array<UtxoDevnetHandle> = []
afterEach(() => { for (const d of open.splice(0)) d.close() })

const setup = async () => {
  const d = makeUtxoDevnet()
  open.push(d)
  const me = testWallet(0x31, d.ledger)
  const other = testWallet(0x32, d.ledger)
  await run(d.ledger.mine(1, me.address))
  await run(d.ledger.mine(params.coinbaseMaturity, other.address))
  return { d, ledger: d.ledger, me, other }
}

describe("coinsOf", () => {
  it("counts our unconfirmed change, drops what we spent, and numbers the chain", async () => {
    const { d, ledger, me, other } = await setup()
    const confirmed = await run(ledger.listUnspent([me.address]))
    expect(confirmed).toHaveLength(1)
    // A chain of three payments, each spending the previous change, none in a block.
    const own: string[] = []
    let inputs = [...confirmed]
    for (let i = 0; i < 3; i++) {
      const tx = ok(buildSend(params, { inputs, signer: { privateKey: me.privateKey }, changeAddress: me.address, outputs: [{ address: other.address, value: 100_000n }] }))
      await run(ledger.broadcast(tx.hex))
      own.push(tx.hex)
      const coins = coinsOf({ script: me.script, confirmed, own }, params)
      expect(coins).toHaveLength(1)
      inputs = coins.map((c) => ({ ...c, height: 0, confirmations: 0, coinbase: false }))
      expect(coins[0]!.txid).toBe(tx.txid)
      expect(coins[0]!.ancestors).toBe(i + 1)
    }
    // Given in any order, the same answer; and a chain is put back in the order it can be sent.
    expect(coinsOf({ script: me.script, confirmed, own: [...own].reverse() }, params)).toEqual(coinsOf({ script: me.script, confirmed, own }, params))
    expect(spendingOrder([...own].reverse(), (hex) => hex)).toEqual(own)
    // Once mined: the ledger lists the last change, confirmed; the old transactions add nothing.
    await run(ledger.mine(1, other.address))
    const after = await run(ledger.listUnspent([me.address]))
    const coins = coinsOf({ script: me.script, confirmed: after, own }, params)
    expect(coins.map(outpointOf)).toEqual(after.map(outpointOf))
    expect(coins[0]!.ancestors).toBe(0)
    expect(await run(d.mempool)).toEqual([])
  })

  it("a confirmed transaction whose change is spent in a block adds no phantom coin", async () => {
    const { ledger, me, other } = await setup()
    const confirmed = await run(ledger.listUnspent([me.address]))
    const a = ok(buildSend(params, { inputs: confirmed, signer: { privateKey: me.privateKey }, changeAddress: me.address, outputs: [{ address: other.address, value: 100_000n }] }))
    await run(ledger.broadcast(a.hex))
    await run(ledger.mine(1, other.address))
    const afterA = await run(ledger.listUnspent([me.address]))
    const b = ok(buildSend(params, { inputs: afterA, signer: { privateKey: me.privateKey }, changeAddress: me.address, outputs: [{ address: other.address, value: 100_000n }] }))
    await run(ledger.broadcast(b.hex))
    await run(ledger.mine(1, other.address))
    const now = await run(ledger.listUnspent([me.address]))
    // Only `a` is remembered (b was forgotten, say): a's change is gone from the UTXO set and must not come back.
    const coins = coinsOf({ script: me.script, confirmed: now, own: [a.hex] }, params)
    expect(coins.map(outpointOf)).toEqual(now.map(outpointOf))
  })

  it("counts a payment to us that is in the mempool, with the ancestors its payer gave", async () => {
    const { ledger, me, other } = await setup()
    const theirs = (await run(ledger.listUnspent([other.address]))).filter((u) => !u.coinbase || u.confirmations >= params.coinbaseMaturity)
    const pay = ok(buildSend(params, { inputs: theirs.slice(0, 1), signer: { privateKey: other.privateKey }, changeAddress: other.address, outputs: [{ address: me.address, value: 50_000n }, { address: me.address, value: 60_000n }] }))
    await run(ledger.broadcast(pay.hex))
    const coins = coinsOf({ script: me.script, confirmed: await run(ledger.listUnspent([me.address])), own: [], incoming: [{ hex: pay.hex, ancestors: 3 }] }, params)
    expect(coins.filter((c) => c.txid === pay.txid).map((c) => [c.value, c.ancestors])).toEqual([[50_000n, 3], [60_000n, 3]])
  })
})

describe("CoinPool", () => {
  it("chains payments on its own change and refuses past the ancestor limit", async () => {
    const { ledger, me, other } = await setup()
    const pool = new CoinPool(me.script, coinsOf({ script: me.script, confirmed: await run(ledger.listUnspent([me.address])), own: [] }, params))
    const start = pool.total()
    for (let i = 0; i < 5; i++) {
      const inputs = pool.pick(10_000n, 150n, 5)
      expect(inputs, `payment ${i}`).toBeDefined()
      const tx = ok(buildSend(params, { inputs: inputs!, signer: { privateKey: me.privateKey }, changeAddress: me.address, outputs: [{ address: other.address, value: 10_000n }] }))
      await run(ledger.broadcast(tx.hex)) // the devnet takes the chain: each spends the last change
      pool.spend(tx.hex)
    }
    expect(pool.size).toBe(1)
    expect(pool.usable(5)).toEqual([]) // five unconfirmed ancestors: a sixth would pass a limit of 5
    expect(pool.pick(10_000n, 150n, 5)).toBeUndefined()
    expect(pool.total()).toBeLessThan(start - 50_000n)
  })

  it("prefers the coin with the fewest unconfirmed ancestors, and combines coins when none is enough alone", () => {
    const script = Uint8Array.of(1)
    const coin = (n: number, value: bigint, ancestors: number) => ({ txid: n.toString(16).padStart(64, "0"), vout: 0, value, script, prevTxHex: "", ancestors })
    const pool = new CoinPool(script, [coin(1, 50_000n, 2), coin(2, 20_000n, 0), coin(3, 30_000n, 1)])
    expect(pool.pick(10_000n, 150n, 25)!.map((c) => c.value)).toEqual([20_000n])
    expect(pool.pick(45_000n, 150n, 25)!.map((c) => c.value)).toEqual([50_000n])
    expect(pool.pick(70_000n, 150n, 25)!.map((c) => c.value)).toEqual([50_000n, 30_000n])
    expect(pool.pick(200_000n, 150n, 25)).toBeUndefined()
    // The only coin big enough alone has 2 ancestors: under a limit of 2 the two others combine.
    expect(pool.pick(45_000n, 150n, 2)!.map((c) => c.value)).toEqual([30_000n, 20_000n])
    expect(pool.pick(45_000n, 150n, 1)).toBeUndefined()
  })

  it("keeps an unconfirmed payment to us under the descendant limit across all the chains it starts", async () => {
    const { ledger, me, other } = await setup()
    // Another key pays us four coins in one transaction that is not in a block (a sponsor's funding).
    const otherCoins = await run(ledger.listUnspent([other.address]))
    const funding = ok(buildSend(params, { inputs: otherCoins.slice(0, 1), signer: { privateKey: other.privateKey }, changeAddress: other.address,
      outputs: Array.from({ length: 4 }, () => ({ address: me.address, value: 1_000_000n })) }))
    await run(ledger.broadcast(funding.hex))
    const pool = new CoinPool(me.script)
    pool.receive(funding.hex)
    const own: string[] = []
    // Each payment takes the coin with the fewest ancestors: four chains, none deeper than 6.
    for (;;) {
      const inputs = pool.pick(10_000n, 150n, 25)
      if (inputs === undefined) break
      const tx = ok(buildSend(params, { inputs, signer: { privateKey: me.privateKey }, changeAddress: me.address, outputs: [{ address: other.address, value: 10_000n }] }))
      pool.spend(tx.hex)
      own.push(tx.hex)
    }
    // The funding and 24 of ours: a 25th would give it 26, which bitcoind refuses.
    expect(own).toHaveLength(24)
    expect(pool.size).toBe(4)
    expect(Math.max(...pool.usable(1_000).map((c) => c.ancestors))).toBeLessThanOrEqual(7)
    expect(pool.usable(25)).toEqual([])
    // Rebuilt from the ledger and our transactions, the pool counts the same.
    const sources = { script: me.script, confirmed: await run(ledger.listUnspent([me.address])), own, incoming: [{ hex: funding.hex }] }
    const rebuilt = poolOf(sources, params)
    expect(rebuilt.usable(25).filter((c) => c.txid !== (sources.confirmed[0]?.txid ?? ""))).toEqual([])
    // A confirmed coin of ours hangs from nothing: still usable.
    expect(rebuilt.usable(25).map(outpointOf)).toEqual(sources.confirmed.map(outpointOf))
    expect(rebuilt.pick(10_000n, 150n, 25)?.map(outpointOf)).toEqual(sources.confirmed.slice(0, 1).map(outpointOf))
    // Once the funding is in a block, its chains are only as deep as their own ancestors.
    for (const hex of own) await run(ledger.broadcast(hex))
    await run(ledger.mine(1, other.address))
    const after = poolOf({ ...sources, confirmed: await run(ledger.listUnspent([me.address])) }, params)
    expect(after.usable(25).length).toBe(5)
  })
})
