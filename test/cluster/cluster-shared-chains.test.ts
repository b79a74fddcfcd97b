// Issue 25, item 6: `npm run cluster` starts one litecoind -regtest and one anvil for all its nodes.
// Two nodes of the command report (ops_nodes, each node's own probe of its chains) the ledger and
// base as RPC chains; blocks mined on that litecoind from outside show on both nodes at the same
// height, so both follow the one chain. SIGTERM stops the nodes and the chains with them.
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { freePort } from "../../harness/ports.ts"
import { randomLedgerKey } from "../../harness/walletServices.ts"
import { makeRpcLedger } from "../../src/chain/ledger/rpcLedger.ts"
import { ledgerParams, litecoinRegtestParams } from "../../src/chain/params.ts"
import { testMasterKey } from "../support/node.ts"
import { waitFor } from "../support/waitFor.ts"

let db: TestDatabase | undefined
afterAll(async () => {
  await db?.drop()
})

interface ChainReport { readonly chain: string; readonly kind: string; readonly height: number | null; readonly chainId?: number }

const rpc = async <T,>(url: string, method: string, ...params: unknown[]): Promise<T> => {
  const u = new URL(url)
  const res = await fetch(`${u.protocol}//${u.host}/`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Basic " + Buffer.from(`${u.username}:${u.password}`).toString("base64") },
    body: JSON.stringify({ jsonrpc: "1.0", id: 1, method, params })
  })
  return ((await res.json()) as { result: T }).result
}

describe("npm run cluster: shared chains", () => {
  it("two nodes follow one litecoind and one anvil, started and stopped by the command", async () => {
    db = await createTestDatabase("multichains")
    const dataDir = mkdtempSync(join(tmpdir(), "sl-multichains-"))
    const { SHARDLINE_LEDGER_RPC_URL: _l, SHARDLINE_EVM_RPC_URLS: _e, SHARDLINE_DEVNET_PER_NODE: _d, ...env } = process.env
    const child = spawn(process.execPath, ["--import", "tsx", "cluster/multi.ts", "--nodes", "2",
      "--http-port", String(await freePort()), "--desk-http-port", String(await freePort()),
      "--social-http-port", String(await freePort()), "--runner-port", String(await freePort())], {
      env: { ...env, SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey, SHARDLINE_DATA_DIR: dataDir },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stderr = ""
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()))
    child.stdout.on("data", () => {})
    const exited = new Promise<string>((resolve) => child.once("exit", (c, signal) => resolve(signal ?? `code ${c}`)))
    let failure: unknown
    try {
      const ledgerUrl = await waitFor("the shared chains' line", 120_000, async () => stderr.match(/chains: one for every node: litecoind -regtest (\S+)/)?.[1])
      const withCredentials = new URL(ledgerUrl)
      withCredentials.username = "u"
      withCredentials.password = "p"
      const reports = async () => (await db!.query<{ node: string; chains: Array<ChainReport> }>(
        "SELECT node, stats->'chains' AS chains FROM ops_nodes WHERE updated_at > now() - interval '10 seconds' ORDER BY node")
        // Before the first node's migrations there is no table yet.
        .catch(() => []))
      await waitFor("both nodes reporting their chains", 240_000, async () => ((await reports()).length === 2 ? true : undefined), 1_000)
      // Blocks mined from outside, straight on the shared litecoind: both nodes see the new tip.
      const ledger = makeRpcLedger({ url: withCredentials.toString(), params: ledgerParams, nodeParams: litecoinRegtestParams })
      await Effect.runPromise(ledger.mine(3, randomLedgerKey().address))
      const tip = await rpc<number>(withCredentials.toString(), "getblockcount")
      const seen = await waitFor(`both nodes at the ledger's tip ${tip}`, 60_000, async () => {
        const rows = await reports()
        const ledgers = rows.map((r) => r.chains.find((c) => c.chain === "ledger"))
        return rows.length === 2 && ledgers.every((l) => l !== undefined && l.height !== null && l.height >= tip) ? rows : undefined
      }, 500)
      for (const row of seen) {
        expect(row.chains.find((c) => c.chain === "ledger"), row.node).toMatchObject({ kind: "rpc" })
        expect(row.chains.find((c) => c.chain === "base"), row.node).toMatchObject({ kind: "rpc", chainId: 8453 })
      }
      expect(tip).toBeGreaterThan(0)
      expect(stderr).not.toContain("each node runs its own in-process devnet")
    } catch (e) {
      failure = e
    }
    child.kill("SIGTERM")
    const how = await exited
    rmSync(dataDir, { recursive: true, force: true })
    if (failure !== undefined) throw new Error(`${String(failure)}\n--- npm run cluster's stderr (end):\n${stderr.slice(-3000)}`)
    expect(how, stderr.slice(-3000)).toBe("code 0")
  }, 420_000)
})
