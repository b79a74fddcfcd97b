// Reading a running node's chain reports: the `chains` section of /ops and the chain gauges of
// /metrics, and polling until they show what a test waits for.
import type { OpsView } from "../../src/platform/ops/OpsView.ts"

export const opsChains = async (baseUrl: string): Promise<OpsView["chains"]> =>
  ((await (await fetch(`${baseUrl}/ops`)).json()) as OpsView).chains

/** The value of `name{chain="<chain>"}` in /metrics, or undefined when the line is absent. */
export const chainMetric = async (baseUrl: string, name: string, chain: string): Promise<number | undefined> => {
  const text = await (await fetch(`${baseUrl}/metrics`)).text()
  const line = text.split("\n").find((l) => l.startsWith(`${name}{chain="${chain}"} `))
  return line === undefined ? undefined : Number(line.split(" ")[1])
}

/** Polls `f` every 100 ms until it returns a value; fails after `ms`. */
export const eventually = async <A>(f: () => Promise<A | undefined>, ms = 10_000): Promise<A> => {
  const deadline = Date.now() + ms
  for (;;) {
    const a = await f()
    if (a !== undefined) return a
    if (Date.now() > deadline) throw new Error(`no value within ${ms} ms`)
    await new Promise((r) => setTimeout(r, 100))
  }
}
