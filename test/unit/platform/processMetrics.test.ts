// The /metrics of a node with several processes: every sample labelled with its process, each
// family's HELP and TYPE once (src/platform/ops/processMetrics.ts).
import { describe, expect, it } from "vitest"
import { labelSamples, mergeExpositions } from "../../../src/platform/ops/processMetrics.ts"

const one = [
  "# HELP a_total A.",
  "# TYPE a_total counter",
  'a_total{route="/x"} 3',
  "# HELP b gauge B.",
  "# TYPE b gauge",
  "b 7",
  "# HELP h H.",
  "# TYPE h histogram",
  'h_bucket{le="+Inf"} 2',
  "h_sum 5",
  "h_count 2",
  ""
].join("\n")

describe("process metrics", () => {
  it("labels every sample with its process, with and without labels of its own", () => {
    const labelled = labelSamples(one, 1).split("\n")
    expect(labelled).toContain('a_total{process="1",route="/x"} 3')
    expect(labelled).toContain('b{process="1"} 7')
    expect(labelled).toContain('h_bucket{process="1",le="+Inf"} 2')
    expect(labelled).toContain('h_count{process="1"} 2')
    expect(labelled).toContain("# TYPE a_total counter")
  })

  it("merges processes into one exposition: HELP and TYPE once per family, every process's samples under it", () => {
    const other = "# HELP b gauge B.\n# TYPE b gauge\nb 9\n# HELP c C.\n# TYPE c gauge\nc 1\n"
    const merged = mergeExpositions([labelSamples(one, 0), labelSamples(other, 1)]).split("\n")
    expect(merged.filter((l) => l === "# TYPE b gauge")).toHaveLength(1)
    const b = merged.indexOf("# TYPE b gauge")
    expect(merged.slice(b + 1, b + 3).sort()).toEqual(['b{process="0"} 7', 'b{process="1"} 9'])
    // A family only one process has still comes with its HELP and TYPE.
    expect(merged).toContain("# TYPE c gauge")
    expect(merged[merged.indexOf("# TYPE c gauge") + 1]).toBe('c{process="1"} 1')
    const h = merged.indexOf("# TYPE h histogram")
    expect(merged.slice(h + 1, h + 4)).toEqual(['h_bucket{process="0",le="+Inf"} 2', 'h_sum{process="0"} 5', 'h_count{process="0"} 2'])
    // Families stay sorted by name, as one process's exposition is.
    const types = merged.filter((l) => l.startsWith("# TYPE")).map((l) => l.split(" ")[2])
    expect(types).toEqual([...types].sort())
  })
})
