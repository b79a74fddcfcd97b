// The metric-name extraction the /metrics check relies on: names are found in the expression shapes
// alerts.yml and the dashboard use, and nothing else (functions, labels, keywords, variables) is taken
// for one; histogram suffixes are accepted only for a histogram.
import { describe, expect, it } from "vitest"
import { dashboardExpressions, exposedFamilies, metricNames, missingNames, ruleExpressions } from "../../support/promqlNames.ts"

describe("metricNames", () => {
  it("finds the selected metrics, not functions, labels, keywords or variables", () => {
    expect([...metricNames(`histogram_quantile(0.99, sum by (service, le) (rate(shardline_http_request_duration_ms_bucket{job="shardline", instance=~"$instance"}[$__rate_interval])))`)])
      .toEqual(["shardline_http_request_duration_ms_bucket"])
    expect([...metricNames(`max(shardline_runners{state="healthy"}) < max(max_over_time(shardline_runners{state="healthy"}[15m])) or max(shardline_runners{state="unhealthy"}) > 0`)])
      .toEqual(["shardline_runners"])
    expect([...metricNames(`time() - max(a_seconds) > 2 * max(b_seconds) and on (x) c_total > 1 / 60`)]).toEqual(["a_seconds", "b_seconds", "c_total"])
    expect([...metricNames(`max(shardline_fee_sponsor_sats) / 1e8`)]).toEqual(["shardline_fee_sponsor_sats"])
    expect([...metricNames(`up{job="shardline"} == 0 unless bool foo:rate5m`)]).toEqual(["up", "foo:rate5m"])
    expect([...metricNames(`sum(x{a="by (y)", b='{z}'})`)]).toEqual(["x"])
  })
})

describe("ruleExpressions and dashboardExpressions", () => {
  it("reads one-line and block expressions, and nested panel targets", () => {
    const yaml = [
      "groups:", "  - name: g", "    rules:", "      - alert: A", "        expr: up == 0", "        for: 1m",
      "      - alert: B", "        expr: |", "          max(a)", "            > 1", "        for: 5m", "        labels:", "          severity: x"
    ].join("\n")
    expect(ruleExpressions(yaml)).toEqual(["up == 0", "max(a) > 1"])
    expect(dashboardExpressions({ panels: [{ targets: [{ expr: "a" }] }, { type: "row", panels: [{ targets: [{ expr: "b" }, { refId: "C" }] }] }] }))
      .toEqual(["a", "b"])
  })
})

describe("missingNames", () => {
  it("accepts a histogram's series and Prometheus' own, and nothing else", () => {
    const families = exposedFamilies([
      "# HELP h_ms h", "# TYPE h_ms histogram", 'h_ms_bucket{le="1"} 0', "h_ms_sum 0", "h_ms_count 0",
      "# TYPE g gauge", "g 1", "# TYPE s summary", "s_sum 0", "s_count 0", "bare 3"
    ].join("\n"))
    expect(missingNames(["h_ms_bucket", "h_ms_sum", "h_ms_count", "g", "up", "s_sum", "bare"], families)).toEqual([])
    expect(missingNames(["g_bucket", "s_bucket", "h_ms_total", "nope"], families)).toEqual(["g_bucket", "h_ms_total", "nope", "s_bucket"])
  })
})
