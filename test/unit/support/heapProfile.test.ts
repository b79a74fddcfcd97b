// The allocation summary of BENCH_ORDERS_HEAP=1 (harness/heapProfile.ts): every node's own bytes
// counted once, sites merged by name and place, largest first, paths made relative.
import { describe, expect, it } from "vitest"
import { type HeapProfileNode, summariseHeap } from "../../../harness/heapProfile.ts"

const node = (functionName: string, url: string, line: number, selfSize: number, children: Array<HeapProfileNode> = []): HeapProfileNode =>
  ({ callFrame: { functionName, url, lineNumber: line - 1, columnNumber: 4 }, selfSize, children })

describe("summariseHeap", () => {
  it("totals the bytes, merges a site seen on two paths, and ranks the sites", () => {
    const profile = {
      head: node("(root)", "", 0, 0, [
        node("lane", "file:///w/src/lane.ts", 10, 300, [node("", "file:///w/src/body.ts", 3, 500)]),
        node("batch", "file:///w/src/batch.ts", 20, 100, [node("", "file:///w/src/body.ts", 3, 100), node("next", "", 0, 0)])
      ])
    }
    const s = summariseHeap(profile, 2, "file:///w/")
    expect(s.bytes).toBe(1000)
    expect(s.bySite).toEqual([
      { site: "(anonymous) src/body.ts:3:5", bytes: 600, pct: 60 },
      { site: "lane src/lane.ts:10:5", bytes: 300, pct: 30 }
    ])
  })

  it("walks a profile deeper than the call stack allows", () => {
    let deep = node("leaf", "file:///w/x.ts", 1, 7)
    for (let i = 0; i < 50_000; i++) deep = node("f", "file:///w/x.ts", 2, 1, [deep])
    const s = summariseHeap({ head: deep }, 5, "file:///w/")
    expect(s.bytes).toBe(50_007)
    expect(s.bySite[0]).toEqual({ site: "f x.ts:2:5", bytes: 50_000, pct: 100 })
  })
})
