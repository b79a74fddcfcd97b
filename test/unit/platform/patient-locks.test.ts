// What a lock session is known to hold after each answer of the runner storage
// (src/platform/database/patientLocks.ts): a refresh or acquire answers for the shards it asked
// about, and only for those; what it did not ask about is unchanged.
import { describe, expect, it } from "vitest"
import { afterAnswer } from "../../../src/platform/database/patientLocks.ts"

describe("patient shard locks: the held set", () => {
  it("a refresh that lost a shard drops it, keeps the others, and leaves unasked shards alone", () => {
    const held = new Set(["default:1", "default:2", "default:3"])
    expect([...afterAnswer(held, ["default:1", "default:2"], ["default:2"])].sort()).toEqual(["default:2", "default:3"])
  })

  it("an acquire adds what it got (asked nothing taken away), and the input is not changed", () => {
    const held = new Set(["default:1"])
    const next = afterAnswer(held, [], ["default:7"])
    expect([...next].sort()).toEqual(["default:1", "default:7"])
    expect([...held]).toEqual(["default:1"])
  })
})
