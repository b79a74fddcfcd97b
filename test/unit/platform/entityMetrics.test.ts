import { Cause, Effect, Metric, MetricState } from "effect"
import { describe, expect, it } from "vitest"
import { entityMetrics, lastDefectsByType } from "../../../src/platform/entity/EntityMetrics.ts"

/** The value of a metric with tag type=`entityType`, as the Prometheus exporter would read it. */
const valueOf = (name: string, entityType: string) => {
  for (const pair of Metric.unsafeSnapshot()) {
    if (pair.metricKey.name !== name || !pair.metricKey.tags.some((t) => t.key === "type" && t.value === entityType)) continue
    const s = pair.metricState
    if (MetricState.isCounterState(s)) return { count: Number(s.count), sum: 0 }
    if (MetricState.isGaugeState(s)) return { count: Number(s.value), sum: 0 }
    if (MetricState.isHistogramState(s)) return { count: s.count, sum: s.sum }
  }
  return { count: 0, sum: 0 }
}

describe("entityMetrics", () => {
  it("registers every series of a type at 0 when made, so /metrics lists them before the first use", () => {
    entityMetrics("TestRegistered")
    const names = Metric.unsafeSnapshot()
      .filter((p) => p.metricKey.tags.some((t) => t.key === "type" && t.value === "TestRegistered"))
      .map((p) => p.metricKey.name).sort()
    expect(names).toEqual(["shardline_entity_activations_total", "shardline_entity_defects_total", "shardline_entity_messages_in_flight",
      "shardline_entity_messages_total", "shardline_timer_lag_ms"])
    expect(valueOf("shardline_entity_defects_total", "TestRegistered").count).toBe(0)
  })

  it("counts activations per entity type, and only for that type", async () => {
    const m = entityMetrics("TestActivation")
    await Effect.runPromise(m.activated)
    await Effect.runPromise(m.activated)
    expect(valueOf("shardline_entity_activations_total", "TestActivation").count).toBe(2)
    expect(valueOf("shardline_entity_activations_total", "TestOther").count).toBe(0)
  })

  it("guard counts a defect and re-raises it, but not a typed failure or a success", async () => {
    const m = entityMetrics("TestGuard")
    expect(await Effect.runPromise(m.guard(Effect.succeed(7)))).toBe(7)
    const failed = await Effect.runPromiseExit(m.guard(Effect.fail("refused")))
    expect(failed._tag).toBe("Failure")
    expect(valueOf("shardline_entity_defects_total", "TestGuard").count).toBe(0)
    const died = await Effect.runPromiseExit(m.guard(Effect.die(new Error("boom"))))
    expect(died._tag === "Failure" && Cause.squash(died.cause)).toEqual(new Error("boom"))
    expect(valueOf("shardline_entity_defects_total", "TestGuard").count).toBe(1)
  })

  it("guard counts every message, the ones in hand, and keeps the last defect's first line per type", async () => {
    const m = entityMetrics("TestSupervision")
    let inHandDuring = -1
    await Effect.runPromise(m.guard(Effect.sync(() => { inHandDuring = valueOf("shardline_entity_messages_in_flight", "TestSupervision").count })))
    expect(inHandDuring).toBe(1)
    expect(valueOf("shardline_entity_messages_in_flight", "TestSupervision").count).toBe(0)
    await Effect.runPromiseExit(m.guard(Effect.fail("refused")))
    expect(lastDefectsByType()["TestSupervision"]).toBeUndefined()
    await Effect.runPromiseExit(m.guard(Effect.die(new Error("the book crossed\nsecond line"))))
    expect(valueOf("shardline_entity_messages_total", "TestSupervision").count).toBe(3)
    expect(valueOf("shardline_entity_messages_in_flight", "TestSupervision").count).toBe(0)
    expect(lastDefectsByType()["TestSupervision"]).toEqual({ message: expect.stringContaining("the book crossed"), at: expect.any(String) })
    expect(lastDefectsByType()["TestSupervision"]!.message).not.toContain("second line")
  })

  it("timerFired records the lag behind the due time, never negative", async () => {
    const m = entityMetrics("TestTimer")
    await Effect.runPromise(m.timerFired(Date.now() - 1500))
    await Effect.runPromise(m.timerFired(Date.now() + 60_000)) // early: lag 0
    const lag = valueOf("shardline_timer_lag_ms", "TestTimer")
    expect(lag.count).toBe(2)
    expect(lag.sum).toBeGreaterThanOrEqual(1500)
    expect(lag.sum).toBeLessThan(1500 + 1000)
  })
})
