// The wrap desk's LTC chain against a real `litecoind -regtest` (SHARDLINE_LTC_RPC_URL), the way
// the token ledger is tested today: the node's chains layer reads its tip and a balance, the
// `devnet balance --chain ltc` CLI reads the node directly, and `devnet pay | mine` refuse it.
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Either, Layer } from "effect"
import { ECPairFactory } from "ecpair"
import * as ecc from "tiny-secp256k1"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { p2pkhAddressOfPubkey } from "../../src/chain/address.ts"
import { CoinLedgers } from "../../src/chain/ledger/CoinLedgers.ts"
import { sumValues } from "../../src/chain/ledger/UtxoLedger.ts"
import { coinChains } from "../../src/chain/params.ts"
import * as ChainsLive from "../../src/platform/ChainsLive.ts"
import { configLayer } from "../../src/config.ts"
import * as SecretBox from "../../src/platform/SecretBox.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { configFrom, testMasterKey } from "../../harness/config.ts"
import { cli, cliJson, cliRefused } from "../support/cli.ts"
import { startLitecoind, type Litecoind, urlWithCredentials } from "../support/litecoind.ts"

const ECPair = ECPairFactory(ecc)
let litecoind: Litecoind
let db: TestDatabase

const ltcAddress = (): string => {
  const a = p2pkhAddressOfPubkey(ECPair.makeRandom().publicKey, coinChains.ltc.params)
  if (Either.isLeft(a)) throw new Error(a.left.message)
  return a.right
}

const ltcUrl = () => urlWithCredentials(litecoind)

beforeAll(async () => {
  litecoind = await startLitecoind()
  // The node's own wallet pays the test addresses (regtest: mature coinbases after 100 blocks).
  await litecoind.rpc("createwallet", "w")
  const miner = await litecoind.rpc<string>("getnewaddress", "", "legacy")
  await litecoind.rpc("generatetoaddress", 101, miner)
  db = await createTestDatabase("coinltc")
}, 60_000)
afterAll(async () => {
  await litecoind?.stop()
  await db?.drop()
})

describe("LTC over litecoind -regtest", () => {
  it("the chains layer serves LTC from the node and BTC from a devnet", { timeout: 120_000 }, async () => {
    const miner = ltcAddress()
    const to = ltcAddress()
    const txid = await litecoind.rpc<string>("sendtoaddress", to, 1.5)
    await litecoind.rpc("generatetoaddress", 1, miner)
    const config = configFrom({ SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey, SHARDLINE_LTC_RPC_URL: ltcUrl(), SHARDLINE_DEVNET_BLOCK_MS: "0" })
    const read = Effect.gen(function*() {
      const coins = yield* CoinLedgers
      const ltc = coins.get("ltc")
      const btc = coins.get("btc")
      return {
        ltcTip: (yield* ltc.tip).height,
        btcTip: (yield* btc.tip).height,
        held: sumValues(yield* ltc.listUnspent([to])),
        tx: (yield* ltc.getTx(txid)).confirmations
      }
    })
    const layer = ChainsLive.layer.pipe(Layer.provide(SecretBox.layer), Layer.provide(configLayer(config)))
    const r = await Effect.runPromise(Effect.scoped(Effect.provide(read, layer)))
    expect(r).toEqual({ ltcTip: 102, btcTip: 120, held: 150_000_000n, tx: 1 })
  })

  it("devnet balance --chain ltc reads the node; pay and mine refuse it in one line", { timeout: 120_000 }, async () => {
    const to = ltcAddress()
    await litecoind.rpc("sendtoaddress", to, 0.25)
    await litecoind.rpc("generatetoaddress", 1, ltcAddress())
    // Its own data dir: never the ./.data of the user's `npm start` (its sealed EVM hot wallet is
    // not under the test's master key).
    const env = { SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey, SHARDLINE_LTC_RPC_URL: ltcUrl(), SHARDLINE_DATA_DIR: mkdtempSync(join(tmpdir(), "sl-coin-cli-")) }
    const [balance, pay, mine] = await Promise.all([
      cli(["devnet", "balance", "--chain", "ltc", "--address", to, "--json"], env),
      cli(["devnet", "pay", "--chain", "ltc", "--to", to, "--amount", "1", "--json"], env),
      cli(["devnet", "mine", "--chain", "ltc", "--json"], env)
    ])
    expect(cliJson(balance)).toEqual({ balance: "0.25" })
    for (const r of [pay, mine]) {
      expect(cliRefused(r)).toMatch(/refused: ltc is a real node \(SHARDLINE_LTC_RPC_URL is set\)/)
      expect(r.stderr).not.toContain(":p@")
    }
  })
})
