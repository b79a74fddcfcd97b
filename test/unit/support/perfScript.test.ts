// The on-CPU summary the orders bench prints with BENCH_ORDERS_PERF=1 (harness/perfScript.ts):
// samples parsed from `perf script`'s text, the main thread told from the others, each sample
// put where its innermost frame runs and under the innermost frame of ours on its stack.
import { describe, expect, it } from "vitest"
import { areaOfFrame, parsePerfScript, summariseOnCpu } from "../../../harness/perfScript.ts"

const script = `node 100  2062.874141:     500250 cpu-clock:ppp: 
	    7fa3b45f7894 JS:* file:///w/node_modules/effect/dist/esm/ParseResult.js:559:17+0x1a1 (/tmp/perf-100.map)
	    7fa3b471cb3a JS:* file:///w/src/exchange/http/SignedLane.ts:1:5033+0x67a (/tmp/perf-100.map)
	    7fa3b46ddf4f JS:*onceWrapper node:events:633:21+0x1cf (/tmp/perf-100.map)

node 100  2062.875141:     500250 cpu-clock:ppp: 
	    ffffffff8100 pvm_irq_enable+0x4 ([kernel.kallsyms])
	         15d5282 Builtins_CallFunction+0x282 (/usr/bin/node)
	    7fa3b470387e JS:* file:///w/src/exchange/auth/SignedAuth.ts:1:1189+0x83e (/tmp/perf-100.map)
	    7fa3b471c7c1 JS:* file:///w/src/exchange/http/SignedLane.ts:1:5033+0x301 (/tmp/perf-100.map)

node 100  2062.876141:     500250 cpu-clock:ppp: 
	          c494db v8::internal::Scavenger::ScavengeObject+0x12b (/usr/bin/node)

V8 DefaultWorke 104  2062.876141:     500250 cpu-clock:ppp: 
	          c494db v8::internal::compiler::GraphReducer::ReduceNode+0x12b (/usr/bin/node)

node 100  2062.877141:     500250 cpu-clock:ppp: 
	    7fa3b46d684a JS:*drainQueueOnCurrentThread file:///w/node_modules/effect/dist/esm/internal/fiberRuntime.js:491:28+0x8a (/tmp/perf-100.map)
	    7fa3b46d684b JS:*ecdsa file:///w/node_modules/ecpair/src/esm/ecpair.js:112:18+0xc1 (/tmp/perf-100.map)
`

describe("perf script summary", () => {
  it("parses samples with their thread and frames, a comm with spaces included", () => {
    const samples = parsePerfScript(script)
    expect(samples.map((s) => s.tid)).toEqual([100, 100, 100, 104, 100])
    expect(samples[1]!.frames[0]).toEqual({ sym: "pvm_irq_enable+0x4", dso: "[kernel.kallsyms]" })
    expect(samples[0]!.frames).toHaveLength(3)
  })

  it("puts each main-thread sample where its innermost frame runs and under our innermost frame", () => {
    const s = summariseOnCpu(parsePerfScript(script), 100)
    expect(s).toMatchObject({ samples: 5, mainSamples: 4, mainPct: 80 })
    expect(s.byArea).toEqual(expect.arrayContaining([
      { where: "effect", pct: 50 }, { where: "(kernel)", pct: 25 }, { where: "(gc)", pct: 25 }
    ]))
    // A builtin called by our code counts for our code.
    const builtin = parsePerfScript(`node 7  1.0:     1 cpu-clock:ppp: 
	         15d5282 Builtins_LoadIC+0x282 (/usr/bin/node)
	    7fa3b470387e JS:* file:///w/src/exchange/auth/SignedAuth.ts:1:1189+0x83e (/tmp/perf-7.map)
`)
    expect(summariseOnCpu(builtin, 7).byArea).toEqual([{ where: "src/exchange/auth", pct: 100 }])
    expect(s.byProjectFrame).toEqual(expect.arrayContaining([
      { where: "src/exchange/http/SignedLane.ts", pct: 25 },
      { where: "src/exchange/auth/SignedAuth.ts", pct: 25 },
      // A package under node_modules/…/src/ is not ours.
      { where: "(no frame of ours on the stack)", pct: 50 }
    ]))
  })

  it("names areas: our files by service, packages, Node's modules, wasm, V8 and libc", () => {
    expect(areaOfFrame({ sym: "JS:*place file:///x/src/exchange/market/MarketState.ts:1:2", dso: "/tmp/perf-1.map" })).toBe("src/exchange/market")
    expect(areaOfFrame({ sym: "JS:*q file:///x/node_modules/@effect/sql-pg/dist/esm/PgClient.js:1:2", dso: "/tmp/perf-1.map" })).toBe("@effect/sql-pg")
    expect(areaOfFrame({ sym: "JS:*end node:_http_outgoing:1034:45", dso: "/tmp/perf-1.map" })).toBe("node:_http_outgoing")
    expect(areaOfFrame({ sym: "JS:wasm-function[71]-71-turbofan", dso: "/tmp/perf-1.map" })).toBe("(wasm)")
    expect(areaOfFrame({ sym: "[unknown]", dso: "/tmp/perf-1.map" })).toBe("(JS, unnamed code)")
    expect(areaOfFrame({ sym: "Builtins_LoadIC", dso: "/usr/bin/node" })).toBe("(V8 builtins)")
    expect(areaOfFrame({ sym: "_int_malloc", dso: "/usr/lib/x86_64-linux-gnu/libc.so.6" })).toBe("(libc)")
  })
})
