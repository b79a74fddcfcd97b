// Single use across nodes: two runner processes on one Postgres behind one public URL (as behind
// a load balancer). A desk link token redeemed on both nodes at once is linked once; a sign-in
// challenge minted on one node is signed, polled and exchanged on the other, and its one-time
// token is refused on the first. The entity that owns the token or challenge is the one arbiter,
// wherever its shard lives.
import { Effect, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { spawnNode, type NodeProcess } from "../../harness/nodeProcess.ts"
import { freePort } from "../../harness/ports.ts"
import { issueDeskLinkToken } from "../../src/desk/identity/issueLinkToken.ts"
import { clusterClientLayer } from "../support/clusterClient.ts"
import { deskPayload, makeWallet } from "../support/linkWallet.ts"
import { testMasterKey } from "../support/node.ts"

interface Node {
  readonly process: NodeProcess
  readonly desk: string
  readonly social: string
}

let db: TestDatabase
const nodes: Array<Node> = []
let client: ManagedRuntime.ManagedRuntime<any, never> | undefined

const start = async (vars: Record<string, string>): Promise<Node> => {
  const desk = await freePort()
  const social = await freePort()
  const process = await spawnNode({ ...vars, SHARDLINE_DESK_HTTP_PORT: String(desk), SHARDLINE_SOCIAL_HTTP_PORT: String(social) })
  return { process, desk: `http://127.0.0.1:${desk}`, social: `http://127.0.0.1:${social}` }
}

beforeAll(async () => {
  db = await createTestDatabase("wlnodes")
  const vars = {
    SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey, SHARDLINE_MESSAGE_POLL_MS: "500",
    SHARDLINE_DESK_PUBLIC_URL: "https://desk.example", SHARDLINE_SOCIAL_PUBLIC_URL: "https://social.example"
  }
  nodes.push(await start(vars))
  nodes.push(await start(vars))
  client = ManagedRuntime.make(clusterClientLayer(db.url, "shardline:wallet-identity-test"))
}, 150_000)

afterAll(async () => {
  await Promise.all(nodes.map((n) => n.process.dispose()))
  await client?.dispose()
  await db?.drop()
})

const json = async (r: Response) => ({ status: r.status, body: (await r.json()) as Record<string, any>, headers: r.headers })
const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }).then(json)

describe("wallet identity across two nodes", () => {
  it("links a desk token once when both nodes redeem it at the same time", async () => {
    const [a, b] = nodes as [Node, Node]
    const issued = await client!.runPromise(issueDeskLinkToken({ allowRebind: false }) as Effect.Effect<{ token: string }, unknown, any>)
    const path = `/api/public/v1/wallet-link?token=${issued.token}`
    const manifest = (await fetch(`${a.desk}${path}`, { headers: { accept: "application/json" } }).then(json)).body
    expect(manifest.callback_url).toBe(`https://desk.example${path}`)
    const wallet = makeWallet()
    const payload = deskPayload(manifest, wallet)
    const envelope = { payload, signature: wallet.signJson(payload), address: wallet.addresses.p2pkh }
    const answers = await Promise.all([a, b, a, b, a, b].map((n) => post(`${n.desk}${path}`, envelope)))
    expect(answers.map((r) => r.status).sort(), JSON.stringify(answers.map((r) => r.body))).toEqual([200, 410, 410, 410, 410, 410])
    expect((await fetch(`${b.desk}${path}`, { headers: { accept: "application/json" } })).status).toBe(410)
  }, 60_000)

  it("signs in across nodes and refuses the one-time token's replay on the other node", async () => {
    const [a, b] = nodes as [Node, Node]
    const started = await post(`${a.social}/api/public/auth/wallet-challenge`, undefined)
    expect(started.status).toBe(200)
    const cookie = /sl_signin=[^;]+/.exec(started.headers.get("set-cookie") ?? "")![0]
    const id = started.body.id as string
    const message = (await fetch(`${b.social}/api/public/auth/wallet-callback?id=${id}`).then(json)).body.message as string
    const wallet = makeWallet()
    const signed = await post(`${b.social}/api/public/auth/wallet-callback`, { id, address: wallet.addresses.p2pkh, signature: wallet.sign(message) })
    expect(signed.status).toBe(200)
    const second = await post(`${a.social}/api/public/auth/wallet-callback`, { id, address: wallet.addresses.p2pkh, signature: wallet.sign(message) })
    expect(second.status).toBe(409)
    const polled = (await fetch(`${a.social}/api/public/auth/wallet-status?id=${id}`, { headers: { cookie } }).then(json)).body
    expect(polled.status).toBe("signed")
    const sessions = await Promise.all([b, a].map((n) => post(`${n.social}/api/public/auth/wallet-exchange`, { token: polled.token })))
    expect(sessions.map((s) => s.status).sort()).toEqual([200, 410])
    const session = sessions.find((s) => s.status === 200)!.body.token as string
    for (const n of [a, b]) {
      await expect.poll(async () => (await fetch(`${n.social}/api/public/v1/session`, { headers: { authorization: `Bearer ${session}` } })).status,
        { timeout: 5000 }).toBe(200)
    }
  }, 60_000)
})
