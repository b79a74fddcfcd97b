// A violation about a durable timer prints the cluster's record of it (messageTrail.ts): each
// message's write time and writer from its Snowflake id, its processed flag and read mark, and
// every reply stored for it, so two deliveries show as what the storage did.
import { MachineId, Snowflake } from "@effect/cluster"
import { describe, expect, it } from "vitest"
import { trailLines } from "../../../harness/chaos/messageTrail.ts"

const t0 = Date.parse("2026-11-30T08:00:00.000Z")
const id = (atS: number, machineId: number) =>
  String(Snowflake.make({ timestamp: t0 + atS * 1000, machineId: MachineId.make(machineId), sequence: 0 }))

describe("chaos message trail", () => {
  it("names when and by which runner a message and each of its replies were written", () => {
    const lines = trailLines([{
      id: id(12.3, 2), tag: "Tick", payload: "{\"dueAtMs\":1}", processed: true, lastReadMs: t0 + 55_200,
      replies: [{ id: id(58.1, 1), kind: 0, acked: false }, { id: id(100.1, 3), kind: 0, acked: true }]
    }], t0, new Map([[1, "127.0.0.1:1001"], [3, "127.0.0.1:1003"]]))
    expect(lines[0]).toBe("Tick {\"dueAtMs\":1} written 12.3 s by m2; processed, last read 55.2 s; replies: exit 58.1 s by m1, exit 100.1 s by m3 acked")
    expect(lines[1]).toBe("machines: m1 127.0.0.1:1001, m3 127.0.0.1:1003")
  })

  it("says when a message was never read and has no reply", () => {
    const [line] = trailLines([{ id: id(1, 1), tag: "Expire", payload: "{}", processed: false, lastReadMs: null, replies: [] }], t0, new Map())
    expect(line).toBe("Expire {} written 1.0 s by m1; unprocessed, no read mark; replies: no reply")
  })
})
