// What the social failure-path tests share: a node whose token ledger is litecoind -regtest
// reached through a TCP forwarder the test can switch off (real refused connections), its fee
// sponsor funded as an operator would, and two service-keyed accounts with sessions.
import { Effect } from "effect"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { randomLedgerKey } from "../../harness/walletServices.ts"
import { makeRpcLedger } from "../../src/chain/ledger/rpcLedger.ts"
import type { UtxoLedgerShape } from "../../src/chain/ledger/UtxoLedger.ts"
import { ledgerParams, litecoinRegtestParams } from "../../src/chain/params.ts"
import type { NewAccount } from "../../src/social/accounts/Accounts.ts"
import { startLitecoind, type Litecoind } from "./litecoind.ts"
import { startNode, type RunningNode } from "./node.ts"
import { createSession, createSocialAccount } from "./services.ts"
import { startTcpProxy, type TcpProxy } from "./tcpProxy.ts"
import { waitFor } from "./waitFor.ts"

export interface OutageWorld {
  readonly litecoind: Litecoind
  /** Between the node and litecoind: `down()` refuses every connection, `up()` lets them through. */
  readonly proxy: TcpProxy
  readonly db: TestDatabase
  readonly node: RunningNode
  /** litecoind directly (never through the forwarder). */
  readonly ledger: () => UtxoLedgerShape
  readonly alice: NewAccount
  readonly aliceSession: string
  readonly bob: NewAccount
  readonly bobSession: string
  readonly stop: () => Promise<void>
}

export const startOutageWorld = async (dbName: string, price: bigint, vars: Record<string, string> = {}): Promise<OutageWorld> => {
  const litecoind = await startLitecoind()
  const proxy = await startTcpProxy({ host: "127.0.0.1", port: Number(new URL(litecoind.url).port) })
  const db = await createTestDatabase(dbName)
  const node = await startNode(db.url, {
    SHARDLINE_LEDGER_RPC_URL: `http://u:p@127.0.0.1:${proxy.port}/`,
    SHARDLINE_LEDGER_BLOCK_MS: "1000",
    SHARDLINE_SOCIAL_RATE_LIMIT_IP_WEIGHT: "10000000",
    SHARDLINE_MESSAGE_POLL_MS: "100",
    SHARDLINE_SOCIAL_POST_PRICE: price.toString(),
    SHARDLINE_SOCIAL_STAMP_RETRY_MS: "300",
    SHARDLINE_SOCIAL_STAMP_RETRY_MAX_MS: "1500",
    ...vars
  })
  const ledger = () => makeRpcLedger({ url: `http://u:p@127.0.0.1:${new URL(litecoind.url).port}/`, params: ledgerParams, nodeParams: litecoinRegtestParams })
  // The operator funds the fee sponsor (it pays each stamping address its first coin).
  const sponsor = await waitFor("the fee sponsor's wallet", 30_000, async () =>
    (await db.query<{ address: string }>(`SELECT address FROM system_wallets WHERE name = 'fee-sponsor'`))[0]?.address)
  await Effect.runPromise(ledger().mine(1, sponsor))
  await Effect.runPromise(ledger().mine(ledgerParams.coinbaseMaturity, randomLedgerKey().address))
  const alice = await createSocialAccount(db.url, "alice")
  const bob = await createSocialAccount(db.url, "bob")
  const aliceSession = (await createSession(db.url, alice.address)).token
  const bobSession = (await createSession(db.url, bob.address)).token
  const stop = async () => {
    await node.stop()
    await proxy.down()
    await litecoind.stop()
    await db.drop()
  }
  return { litecoind, proxy, db, node, ledger, alice, aliceSession, bob, bobSession, stop }
}
