// Settlement legs the ledger refused at their first broadcast, counted from a node's log by
// reason (the orders bench prints them). A refused leg is stored and sent again by its market's
// sweep, so nothing is lost, but it is not broadcast inline as issue 22 asks, and each refusal
// costs a wallet reload and a lookup. Session 28 found litecoind refusing legs under load with
// "too-long-mempool-chain" (its 25-descendant limit) and the legs built on them as missing inputs.

/** DelegatedWallet's warning: `leg <trade>:<leg> not broadcast: <code> (<reason>); …`. */
const refusal = /leg \S+ not broadcast: (\S+) \(([^,);]*)/

/** Refused legs by code and the reason's first words, most first. */
export const legRefusals = (logLines: ReadonlyArray<string>): ReadonlyArray<{ readonly code: string; readonly reason: string; readonly legs: number }> => {
  const counts = new Map<string, { code: string; reason: string; legs: number }>()
  for (const line of logLines) {
    const m = refusal.exec(line)
    if (m === null) continue
    const key = `${m[1]}\u0000${m[2]}`
    const c = counts.get(key) ?? { code: m[1]!, reason: m[2]!.trim(), legs: 0 }
    c.legs++
    counts.set(key, c)
  }
  return [...counts.values()].sort((a, b) => b.legs - a.legs)
}
