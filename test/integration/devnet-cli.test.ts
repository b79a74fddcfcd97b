// `devnet pay | mine | balance` end to end: a node with in-process devnets, the CLI as a child
// process reaching them through the Devnet entity (cluster storage), and the refusals.
import { randomBytes } from "node:crypto"
import { ECPairFactory } from "ecpair"
import * as ecc from "tiny-secp256k1"
import { Effect, Either, Layer, Redacted } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Devnet, Pay } from "../../schemas/devnet.ts"
import { p2pkhAddressOfPubkey } from "../../src/chain/address.ts"
import { type CoinChain, coinChains } from "../../src/chain/params.ts"
import { configLayer } from "../../src/config.ts"
import { databaseLayer } from "../../src/platform/database/Database.ts"
import { migrations } from "../../src/migrations.ts"
import { storageClient } from "../../src/platform/ShardingSettings.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { cli, cliJson, cliRefused } from "../support/cli.ts"
import { cliEnvOf, startNode, type RunningNode } from "../support/node.ts"
import { anvilDevKey, startAnvil } from "../support/anvil.ts"
import { makeViemLedger } from "../../src/chain/evm/viemLedger.ts"
import { deployMockUsdc, mintMockUsdc } from "../../src/chain/evm/MockUsdc.ts"

const ECPair = ECPairFactory(ecc)
let db: TestDatabase
let node: RunningNode
let env: Record<string, string>

beforeAll(async () => {
  db = await createTestDatabase("devnetcli")
  // No clock: the ledger mines only when asked, EVM devnets mine a block per transaction.
  node = await startNode(db.url, { SHARDLINE_DEVNET_BLOCK_MS: "0" })
  env = cliEnvOf(db.url, node)
}, 120_000)
afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const freshLedgerAddress = (): string => {
  const a = p2pkhAddressOfPubkey(ECPair.makeRandom().publicKey)
  if (Either.isLeft(a)) throw new Error(a.left.message)
  return a.right
}
/** A fresh P2PKH address in a coin chain's own regtest format. */
const freshCoinAddress = (chain: CoinChain): string => {
  const a = p2pkhAddressOfPubkey(ECPair.makeRandom().publicKey, coinChains[chain].params)
  if (Either.isLeft(a)) throw new Error(a.left.message)
  return a.right
}
const freshEvmAddress = (): string => privateKeyToAccount(generatePrivateKey()).address

const json = cliJson
const refused = cliRefused

const pay = (chain: string, to: string, amount: string, asset?: string) =>
  cli(["devnet", "pay", "--chain", chain, "--to", to, `--amount=${amount}`, ...(asset === undefined ? [] : ["--asset", asset]), "--json"], env)
const balance = async (chain: string, address: string, asset?: string) =>
  json(await cli(["devnet", "balance", "--chain", chain, "--address", address, ...(asset === undefined ? [] : ["--asset", asset]), "--json"], env))

describe("devnet CLI against a running node", () => {
  it("ledger: pays native coin and DUSD (Omni property 3), mines, reads the balances back", { timeout: 240_000 }, async () => {
    const to = freshLedgerAddress()
    const [coin, dusd] = await Promise.all([pay("ledger", to, "1.25"), pay("ledger", to, "12.345", "DUSD")])
    expect(json(coin).txid).toMatch(/^[0-9a-f]{64}$/)
    expect(json(dusd).txid).toMatch(/^[0-9a-f]{64}$/)
    // Unconfirmed: nothing yet.
    expect(await balance("ledger", to)).toEqual({ balance: "0" })
    const mined = json(await cli(["devnet", "mine", "--chain", "ledger", "--blocks", "2", "--json"], env))
    expect(mined.chain).toBe("ledger")
    expect(mined.height).toBeGreaterThan(100)
    // The Omni send's reference output is dust coin on top of the 1.25 paid.
    expect(await balance("ledger", to)).toEqual({ balance: "1.2500546" })
    expect(await balance("ledger", to, "3")).toEqual({ balance: "12.345" })
    expect(await balance("ledger", to, "dusd")).toEqual({ balance: "12.345" })
  })

  it("btc and ltc: each its own regtest devnet; pays native coin, mines, reads the balance back", { timeout: 240_000 }, async () => {
    const [toBtc, toLtc] = [freshCoinAddress("btc"), freshCoinAddress("ltc")]
    // Regtest prefixes: BTC m/n (0x6f), LTC the same byte; both differ from the ledger's T.
    expect(toBtc).toMatch(/^[mn]/)
    const [btc, ltc] = await Promise.all([pay("btc", toBtc, "0.75"), pay("ltc", toLtc, "2.5", "LTC")])
    expect(json(btc).txid).toMatch(/^[0-9a-f]{64}$/)
    expect(json(ltc).txid).toMatch(/^[0-9a-f]{64}$/)
    expect(await balance("btc", toBtc)).toEqual({ balance: "0" })
    const [minedBtc, minedLtc] = await Promise.all([
      cli(["devnet", "mine", "--chain", "btc", "--json"], env),
      cli(["devnet", "mine", "--chain", "ltc", "--blocks", "3", "--json"], env)
    ])
    expect(json(minedBtc)).toEqual({ chain: "btc", height: 121 })
    expect(json(minedLtc)).toEqual({ chain: "ltc", height: 123 })
    expect(await balance("btc", toBtc, "BTC")).toEqual({ balance: "0.75" })
    expect(await balance("ltc", toLtc)).toEqual({ balance: "2.5" })
    // The chains are apart: the LTC payment is not on BTC, and a ledger address is not a BTC one.
    expect(await balance("btc", toLtc)).toEqual({ balance: "0" })
    const [ledgerOnBtc, token] = await Promise.all([pay("btc", freshLedgerAddress(), "1"), pay("ltc", toLtc, "1", "DUSD")])
    expect(refused(ledgerOnBtc)).toMatch(/is not a bitcoin-regtest address/)
    expect(refused(token)).toMatch(/unknown asset "DUSD" on ltc: only its native coin, LTC/)
  })

  it("EVM: USDC on ethereum (6 decimals), USDC on bsc (18) and DAI, exact to the last unit", { timeout: 240_000 }, async () => {
    const a = freshEvmAddress()
    const b = freshEvmAddress()
    const paid = await Promise.all([
      pay("ethereum", a, "2.5", "USDC"),
      pay("bsc", b, "1.5", "USDC"),
      pay("ethereum", a, "3.000000000000000001", "DAI")
    ])
    for (const p of paid) expect(json(p).txid).toMatch(/^0x[0-9a-f]{64}$/)
    const mined = json(await cli(["devnet", "mine", "--chain", "bsc", "--json"], env))
    expect(mined).toEqual({ chain: "bsc", height: expect.any(Number) })
    expect(await balance("ethereum", a, "USDC")).toEqual({ balance: "2.5" })
    expect(await balance("bsc", b, "USDC")).toEqual({ balance: "1.5" })
    expect(await balance("ethereum", a, "DAI")).toEqual({ balance: "3.000000000000000001" })
    expect(await balance("bsc", b, "USDT")).toEqual({ balance: "0" })
  })

  it("refuses bad amounts, too many decimals, unknown assets and chains; pays an EVM chain's native coin", { timeout: 240_000 }, async () => {
    const to = freshEvmAddress()
    // Refused by the CLI itself, before it reaches the node.
    const [negative, word, zero, btc] = await Promise.all([
      pay("ethereum", to, "-1", "USDC"),
      pay("ethereum", to, "abc", "USDC"),
      pay("ledger", freshLedgerAddress(), "0"),
      pay("doge", "D7xyz", "1")
    ])
    for (const r of [negative, word, zero, btc]) expect(r.code).toBe(2)
    // Refused by the node, which knows each asset's decimals.
    const [tooPrecise, unknown, native, unknownLedger] = await Promise.all([
      pay("ethereum", to, "1.0000001", "USDC"),
      pay("base", to, "1", "DOGE"),
      pay("base", to, "1"),
      pay("ledger", freshLedgerAddress(), "1", "NOPE")
    ])
    expect(refused(negative)).toMatch(/not a plain positive decimal/)
    expect(refused(word)).toMatch(/not a plain positive decimal/)
    expect(refused(zero)).toMatch(/greater than zero/)
    expect(refused(tooPrecise)).toMatch(/more than 6 decimal places/)
    expect(refused(unknown)).toMatch(/unknown asset "DOGE" on base/)
    // The native coin (ETH on base) is paid from the devnet's hot wallet.
    expect(json(native).txid).toMatch(/^0x[0-9a-f]{64}$/)
    expect(refused(btc)).toMatch(/unknown chain "doge": one of ledger, ethereum, base, bsc, btc, ltc/)
    expect(refused(unknownLedger)).toMatch(/unknown asset "NOPE" on the ledger/)
    // The refusals paid nothing.
    expect(await balance("ethereum", to, "USDC")).toEqual({ balance: "0" })
    expect(await balance("base", to)).toEqual({ balance: "1" })
  })

  it("pay and mine refuse, in one stderr line, a chain that is a real node", { timeout: 240_000 }, async () => {
    const real = {
      ...env,
      SHARDLINE_LEDGER_RPC_URL: "http://user:secret@127.0.0.1:9/",
      SHARDLINE_EVM_RPC_URLS: "ethereum=http://127.0.0.1:9/"
    }
    const [ledgerPay, evmPay, evmMine] = await Promise.all([
      cli(["devnet", "pay", "--chain", "ledger", "--to", freshLedgerAddress(), "--amount", "1", "--json"], real),
      cli(["devnet", "pay", "--chain", "ethereum", "--to", freshEvmAddress(), "--amount", "1", "--asset", "USDC", "--json"], real),
      cli(["devnet", "mine", "--chain", "ethereum", "--json"], real)
    ])
    for (const r of [ledgerPay, evmPay, evmMine]) {
      expect(refused(r)).toMatch(/refused: (ledger|ethereum) is a real node \(SHARDLINE_(LEDGER|EVM)_RPC_URLS?\b/)
      expect(r.stderr).not.toContain("secret")
    }
  })

  it("a Pay redelivered after its cluster message is gone answers the recorded txid and pays once", { timeout: 240_000 }, async () => {
    const to = freshLedgerAddress()
    const request = new Pay({ requestId: randomBytes(16).toString("hex"), to, amount: "0.5" })
    const client = storageClient(node.config).pipe(
      Layer.provideMerge(databaseLayer({ applicationName: "test:devnet", migrations })),
      Layer.provide(configLayer(node.config))
    )
    const send = () => Effect.runPromise(Effect.scoped(Effect.provide(Effect.flatMap(Devnet.client, (c) => c("ledger").Pay(request)), client)))
    const first = await send()
    // What pruning does to processed messages: the cluster no longer remembers this request.
    const messageId = `Devnet/ledger/Pay/pay:${request.requestId}`
    await db.query("DELETE FROM cluster_replies WHERE request_id IN (SELECT request_id FROM cluster_messages WHERE message_id = $1)", [messageId])
    expect(await db.query("DELETE FROM cluster_messages WHERE message_id = $1 RETURNING id", [messageId])).toHaveLength(1)
    const second = await send()
    expect(second.txid).toBe(first.txid)
    await cli(["devnet", "mine", "--json"], env)
    expect(await balance("ledger", to)).toEqual({ balance: "0.5" })
  })
})

describe("devnet balance against a real node (anvil)", () => {
  it("reads an ERC-20 by contract address with the contract's decimals; codes and pay are refused", { timeout: 240_000 }, async () => {
    const anvil = await startAnvil({ chainId: 1 })
    try {
      const holder = freshEvmAddress()
      const token = await Effect.runPromise(Effect.gen(function*() {
        const ledger = yield* makeViemLedger({ chain: "ethereum", rpcUrl: anvil.url, hotWalletKey: Redacted.make(anvilDevKey), devRpc: "anvil" })
        const address = yield* deployMockUsdc(ledger, { name: "USD Coin", symbol: "USDC", decimals: 6 })
        yield* mintMockUsdc(ledger, address, holder as `0x${string}`, 7_250_000n)
        return address
      }))
      const real = { ...env, SHARDLINE_EVM_RPC_URLS: `ethereum=${anvil.url}`, SHARDLINE_EVM_HOT_WALLET_KEY: anvilDevKey }
      const [read, byCode, payRefused] = await Promise.all([
        cli(["devnet", "balance", "--chain", "ethereum", "--address", holder, "--asset", token, "--json"], real),
        cli(["devnet", "balance", "--chain", "ethereum", "--address", holder, "--asset", "USDC", "--json"], real),
        cli(["devnet", "pay", "--chain", "ethereum", "--to", holder, "--amount", "1", "--asset", token, "--json"], real)
      ])
      expect(json(read)).toEqual({ balance: "7.25" })
      // ETH itself (what backs wETH), 18 decimals, read from the node.
      await fetch(anvil.url, {
        method: "POST", headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_setBalance", params: [holder, "0x14d1120d7b160000"] }) // 1.5 ETH
      })
      expect(json(await cli(["devnet", "balance", "--chain", "ethereum", "--address", holder, "--asset", "ETH", "--json"], real))).toEqual({ balance: "1.5" })
      expect(refused(byCode)).toMatch(/give the token's contract address/)
      expect(refused(payRefused)).toMatch(/real node/)
    } finally {
      await anvil.stop()
    }
  })
})
