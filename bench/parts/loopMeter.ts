// The event loop since the last reset, as a bench process reports it: how busy it was and how
// late its callbacks ran. Shared by the node under test (orderNode.ts) and the reference server.
import { type EventLoopUtilization, monitorEventLoopDelay, performance } from "node:perf_hooks"

export const makeLoopMeter = () => {
  let delay = monitorEventLoopDelay({ resolution: 5 })
  delay.enable()
  let elu: EventLoopUtilization = performance.eventLoopUtilization()
  /** The figures since the last reset; `reset` starts a new window after reading. */
  return (reset: boolean) => {
    const used = performance.eventLoopUtilization(elu)
    const ms = (ns: number) => Math.round(ns / 1e4) / 100
    const figures = { utilizationPct: Math.round(used.utilization * 1000) / 10, lagP50Ms: ms(delay.percentile(50)), lagP99Ms: ms(delay.percentile(99)), lagMaxMs: ms(delay.max) }
    if (reset) {
      delay.disable()
      delay = monitorEventLoopDelay({ resolution: 5 })
      delay.enable()
      elu = performance.eventLoopUtilization()
    }
    return figures
  }
}
