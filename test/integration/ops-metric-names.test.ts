// The alert rules and the Grafana dashboard that ship (issue 26, point 4) read only metrics a node
// really exports: every metric name in deploy/prometheus/alerts.yml and deploy/grafana/shardline.json
// is in a real node's /metrics (a histogram's _bucket/_sum/_count counted as the histogram; `up` is
// Prometheus' own). The node runs with SHARDLINE_OPS_TOKEN, as the compose profile does, so the
// scrape is the one Prometheus makes: a bearer token.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { dashboardExpressions, exposedFamilies, metricNames, missingNames, ruleExpressions } from "../support/promqlNames.ts"
import { startNode, type RunningNode } from "../support/node.ts"

const token = "metric-names-test-token"
const deploy = join(process.cwd(), "deploy")
const ruleNames = new Set(ruleExpressions(readFileSync(join(deploy, "prometheus", "alerts.yml"), "utf8")).flatMap((e) => [...metricNames(e)]))
const dashboardNames = new Set(dashboardExpressions(JSON.parse(readFileSync(join(deploy, "grafana", "shardline.json"), "utf8"))).flatMap((e) => [...metricNames(e)]))

let db: TestDatabase
let node: RunningNode

beforeAll(async () => {
  db = await createTestDatabase("metricnames")
  node = await startNode(db.url, { SHARDLINE_OPS_TOKEN: token })
}, 120_000)

afterAll(async () => {
  await node?.stop()
  await db?.drop()
})

const scrape = async () => {
  const res = await fetch(`${node.baseUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } })
  expect(res.status).toBe(200)
  expect(res.headers.get("content-type")).toContain("text/plain")
  return exposedFamilies(await res.text())
}

describe("metric names in alerts.yml and the Grafana dashboard", () => {
  it("are read from both files (the check is not vacuous)", () => {
    for (const name of ["shardline_runners", "shardline_shards_owned", "shardline_shards_total", "shardline_timers_overdue_seconds", "shardline_entity_defects_total",
      "shardline_chain_follower_lag_blocks", "shardline_desk_attestation_last_timestamp_seconds", "shardline_database_up", "shardline_http_requests_total"]) {
      expect(ruleNames).toContain(name)
      expect(dashboardNames).toContain(name)
    }
    expect(dashboardNames).toContain("shardline_timer_lag_ms_bucket")
    expect(dashboardNames).toContain("effect_cluster_entities")
    expect(dashboardNames.size).toBeGreaterThanOrEqual(20)
  })

  it("/metrics needs the ops token, as the scrape config sends it", async () => {
    expect((await fetch(`${node.baseUrl}/metrics`)).status).toBe(401)
    expect((await fetch(`${node.baseUrl}/metrics`, { headers: { authorization: "Bearer wrong" } })).status).toBe(401)
  })

  it("every one is in the node's /metrics", async () => {
    // One request the HTTP metrics count; the gauges come with the node's first report (2 s).
    expect((await fetch(`${node.baseUrl}/api/public/v1/time`)).status).toBe(200)
    const used = new Set([...ruleNames, ...dashboardNames])
    let missing = missingNames(used, await scrape())
    const deadline = Date.now() + 30_000
    while (missing.length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500))
      missing = missingNames(used, await scrape())
    }
    expect(missing).toEqual([])
    // Names no rule or panel may use: the scrape must not make up for a misspelling.
    expect(missingNames(["shardline_runner", "shardline_timers_overdue_second", "shardline_shards_owned_bucket"], await scrape())).toHaveLength(3)
  })
})
