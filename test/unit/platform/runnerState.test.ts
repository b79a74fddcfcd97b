// A runner's state on /ops: `gone` once its heartbeat is older than the lock expiration (rounded up
// to whole seconds, as @effect/cluster rounds it), whatever its healthy flag says: a kill -9 with
// the health check on the dead node leaves the row marked healthy.
import { describe, expect, it } from "vitest"
import { runnerState } from "../../../src/platform/ops/OpsView.ts"

describe("runnerState", () => {
  it("is healthy or unhealthy while the heartbeat is fresh, gone after the expiration", () => {
    expect(runnerState(true, 900, 4000)).toBe("healthy")
    expect(runnerState(false, 900, 4000)).toBe("unhealthy")
    expect(runnerState(true, 4000, 4000)).toBe("healthy")
    expect(runnerState(true, 4001, 4000)).toBe("gone")
    expect(runnerState(false, 12_000, 4000)).toBe("gone")
    // 2500 ms rounds up to 3 s.
    expect(runnerState(true, 2900, 2500)).toBe("healthy")
    expect(runnerState(true, 3100, 2500)).toBe("gone")
  })
})
