// Carries out the schedule on the running world. Each fault records when it really started and
// ended (the checker's fault windows) and what it did; a fault that cannot apply (its node is
// already down from an overlapping kill) says so and is still a window.
import { pollFor } from "../omniIssuer.ts"
import { answers } from "../../src/platform/database/embedded/EmbeddedPostgres.ts"
import { describeFault, type Fault, type ScheduledFault } from "./schedule.ts"
import type { World } from "./world.ts"

export interface AppliedFault extends ScheduledFault {
  startedAtMs: number
  endedAtMs?: number
  note: string
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Start attempts after a kill, as a process manager makes them: a failed start is tried again. */
const startAttempts = 5
const startRetryMs = 2_000

/**
 * Starts node `i` again; a start that fails (the node exited during its start, say in a database
 * cut, or passed its start deadline) is tried again 2 s later, up to 5 times. Before, one failed
 * start left the node down for the rest of the run (the 30-minute run of session 17 ended on one
 * node of three). Returns the failed starts.
 */
const restart = async (world: World, i: number): Promise<number> => {
  for (let attempt = 1; ; attempt++) {
    try {
      await world.startNode(i)
      return attempt - 1
    } catch (e) {
      if (attempt >= startAttempts) throw e
      await sleep(startRetryMs)
    }
  }
}

const apply = async (world: World, f: Fault): Promise<string> => {
  switch (f.kind) {
    case "kill-node": {
      const slot = world.nodes[f.node]!
      const victim = slot.current
      if (victim === undefined || !victim.isRunning()) return "already down"
      victim.child.kill("SIGKILL")
      await victim.exited
      slot.current = undefined
      await sleep(f.downMs)
      const failed = await restart(world, f.node)
      return `killed pid ${victim.pid}, started again${failed > 0 ? ` after ${failed} failed start(s)` : ""}`
    }
    case "restart-postgres": {
      const pid = world.postgres.serverPid
      // SIGQUIT: an immediate shutdown, so the next start runs crash recovery, as after a power cut.
      process.kill(pid, "SIGQUIT")
      await pollFor("postgres back", 60_000, async () => (world.postgres.serverPid !== pid && await answers(world.directUrl, 1_000) ? true : undefined), 200)
      return `postmaster ${pid} → ${world.postgres.serverPid}`
    }
    case "cut-database":
      await world.dbProxy.down()
      await sleep(f.forMs)
      await world.dbProxy.up()
      return "cut and restored"
    case "ledger-rpc":
      await (f.mode === "hang" ? world.ledgerProxy.hang() : world.ledgerProxy.down())
      await sleep(f.forMs)
      await world.ledgerProxy.up()
      return `${f.mode} and restored`
    case "reorg": {
      const rpc = world.litecoind.rpc
      const height = await rpc<number>("getblockcount")
      const hash = await rpc<string>("getblockhash", height - f.depth + 1)
      await rpc("invalidateblock", hash)
      // The miner's next blocks make a longer branch; the dropped blocks' transactions go back to the mempool.
      return `invalidated ${f.depth} block(s) from ${height - f.depth + 1}`
    }
    case "partition-runner": {
      const slot = world.nodes[f.node]!
      const proxy = world.runnerProxies[f.node]
      if (proxy === undefined || slot.current === undefined) return "no runner to partition"
      await proxy.down()
      await sleep(f.forMs)
      await proxy.up()
      return "runner port cut and restored"
    }
  }
}

export const runNemesis = async (world: World, schedule: ReadonlyArray<ScheduledFault>, clock: () => number, log: (s: string) => void): Promise<ReadonlyArray<AppliedFault>> => {
  const applied: Array<AppliedFault> = []
  await Promise.all(schedule.map(async (s) => {
    await sleep(Math.max(0, s.atMs - clock()))
    const a: AppliedFault = { ...s, startedAtMs: clock(), note: "" }
    applied.push(a)
    log(`[${(a.startedAtMs / 1000).toFixed(1)} s] fault: ${describeFault(s.fault)}`)
    try {
      a.note = await apply(world, s.fault)
    } catch (e) {
      a.note = `could not apply: ${String(e)}`
    }
    a.endedAtMs = clock()
    log(`[${(a.endedAtMs / 1000).toFixed(1)} s] fault over: ${describeFault(s.fault)} (${a.note})`)
  }))
  return applied.sort((a, b) => a.startedAtMs - b.startedAtMs)
}
