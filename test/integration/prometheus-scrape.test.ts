// The compose profile's Prometheus config (deploy/prometheus/prometheus.yml) works against a real
// node (issue 26, point 4): Debian's `prometheus` runs the shipped file, changed only where the
// compose file would differ (the node's address, the token file's path, 1 s intervals instead of
// 10 s), against a node that requires SHARDLINE_OPS_TOKEN. The target is up (the bearer token is
// accepted), the node's series are stored, every alert rule evaluates without error and none fires
// on a healthy node; when the node stops, ShardlineNodeDown is pending.
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { freePort, startNode, type RunningNode } from "../support/node.ts"
import { waitFor } from "../support/waitFor.ts"

const token = "prometheus-scrape-test-token"
const shipped = join(process.cwd(), "deploy", "prometheus")

let db: TestDatabase
let node: RunningNode
let dir: string
let prometheus: ChildProcess | undefined
let promUrl: string
let promLog = ""

/** The shipped text with `from` replaced by `to`, failing when the shipped file no longer has `from`. */
const replaced = (text: string, from: string | RegExp, to: string) => {
  const next = text.replace(from, to)
  if (next === text) throw new Error(`deploy/prometheus/prometheus.yml no longer contains ${String(from)}`)
  return next
}

const api = async <A>(path: string): Promise<A> => {
  const res = await fetch(`${promUrl}${path}`)
  const body = (await res.json()) as { status: string; data: A }
  expect(body.status).toBe("success")
  return body.data
}

beforeAll(async () => {
  db = await createTestDatabase("promscrape")
  node = await startNode(db.url, { SHARDLINE_OPS_TOKEN: token })
  dir = mkdtempSync(join(tmpdir(), "sl-prom-"))
  writeFileSync(join(dir, "ops-token"), token)
  writeFileSync(join(dir, "alerts.yml"), readFileSync(join(shipped, "alerts.yml")))
  let config = readFileSync(join(shipped, "prometheus.yml"), "utf8")
  config = replaced(config, "credentials_file: /tmp/shardline-ops-token", `credentials_file: ${join(dir, "ops-token")}`)
  config = replaced(config, /targets: \[[^\]]*\]/, `targets: ["${new URL(node.baseUrl).host}"]`)
  config = replaced(config, /scrape_interval: 10s\n  evaluation_interval: 10s/, "scrape_interval: 1s\n  evaluation_interval: 1s")
  writeFileSync(join(dir, "prometheus.yml"), config)
  const port = await freePort()
  promUrl = `http://127.0.0.1:${port}`
  prometheus = spawn("prometheus", [
    `--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`
  ], { stdio: ["ignore", "pipe", "pipe"] })
  prometheus.stdout?.on("data", (d) => (promLog += String(d)))
  prometheus.stderr?.on("data", (d) => (promLog += String(d)))
  await waitFor(`Prometheus ready at ${promUrl}`, 30_000, async () => {
    if (prometheus?.exitCode !== null) throw new Error(`prometheus exited: ${promLog.slice(-2000)}`)
    return (await fetch(`${promUrl}/-/ready`).then((r) => r.ok, () => false)) || undefined
  })
}, 120_000)

afterAll(async () => {
  if (prometheus !== undefined && prometheus.exitCode === null) {
    const exited = new Promise((r) => prometheus!.once("exit", r))
    prometheus.kill("SIGTERM")
    await exited
  }
  await node?.stop()
  await db?.drop()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

describe("deploy/prometheus/prometheus.yml against a node with SHARDLINE_OPS_TOKEN", () => {
  it("passes promtool check config", () => {
    const r = spawnSync("promtool", ["check", "config", join(dir, "prometheus.yml")], { encoding: "utf8" })
    expect(`${r.stdout}${r.stderr}`).toContain("SUCCESS")
    expect(r.status).toBe(0)
  })

  it("scrapes the node with the bearer token and stores its series", async () => {
    const target = await waitFor("the node's target up", 30_000, async () => {
      const { activeTargets } = await api<{ activeTargets: Array<{ health: string; lastError: string; labels: Record<string, string> }> }>("/api/v1/targets")
      return activeTargets.find((t) => t.health === "up")
    })
    expect(target.labels["job"]).toBe("shardline")
    const shards = await waitFor("shardline_shards_owned stored", 30_000, async () => {
      const { result } = await api<{ result: Array<{ value: [number, string] }> }>("/api/v1/query?query=shardline_shards_owned")
      return result[0]?.value[1] === "300" ? result : undefined
    })
    expect(shards).toHaveLength(1)
  })

  it("loads every alert rule, evaluates them without error, and fires none on a healthy node", async () => {
    const rules = await waitFor("the rules evaluated", 30_000, async () => {
      const { groups } = await api<{ groups: Array<{ name: string; rules: Array<{ name: string; health: string; lastError?: string; state: string }> }> }>("/api/v1/rules")
      const all = groups.flatMap((g) => g.rules)
      return all.length > 0 && all.every((r) => r.health !== "unknown") ? all : undefined
    })
    expect(rules.filter((r) => r.health !== "ok").map((r) => `${r.name}: ${r.lastError}`)).toEqual([])
    expect(rules.map((r) => r.name)).toEqual(expect.arrayContaining(["ShardlineNodeDown", "ShardlineShardsUnowned", "ShardlineAttestationOverdue", "ShardlineHttp5xxRate"]))
    // The attestation gauge reads its first attestation within 10 s of the start: until then it is 0.
    await waitFor("no alert pending or firing", 30_000, async () => {
      const { alerts } = await api<{ alerts: Array<{ labels: Record<string, string>; state: string }> }>("/api/v1/alerts")
      return alerts.length === 0 || undefined
    })
  })

  it("a stopped node is down at once and its alert pending", async () => {
    await node.stop()
    const alert = await waitFor("ShardlineNodeDown pending", 30_000, async () => {
      const { alerts } = await api<{ alerts: Array<{ labels: Record<string, string>; state: string }> }>("/api/v1/alerts")
      return alerts.find((a) => a.labels["alertname"] === "ShardlineNodeDown")
    })
    expect(alert.state).toBe("pending")
    expect(alert.labels["instance"]).toBe(new URL(node.baseUrl).host)
  })
})
