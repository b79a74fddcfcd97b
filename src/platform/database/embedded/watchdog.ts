// A local postmaster follows its node (docs/embedded-postgres.md, "Watchdog"). pg_ctl starts the
// postmaster as a daemon, so a node killed with SIGKILL (or one that exited without running its
// finalizers) would leave it running for ever, holding its port and data dir. Each start of the
// server gets a small detached watchdog process: every WATCHDOG_POLL_MS it checks both pids; when
// the server is gone it exits, when the node is gone it asks the postmaster for a fast shutdown
// (SIGINT), and kills it after WATCHDOG_STOP_WAIT_MS if it is still there.
import { spawn } from "node:child_process"

export const WATCHDOG_POLL_MS = 500
export const WATCHDOG_STOP_WAIT_MS = 10_000

// Plain JavaScript for `node -e`: no import, nothing to compile; argv is [node, nodePid, serverPid].
const script = `
const [nodePid, serverPid] = process.argv.slice(1).map(Number)
const alive = (pid) => { try { process.kill(pid, 0); return true } catch (e) { return e.code === "EPERM" } }
const poll = setInterval(() => {
  if (!alive(serverPid)) process.exit(0)
  if (alive(nodePid)) return
  clearInterval(poll)
  try { process.kill(serverPid, "SIGINT") } catch {}
  const deadline = Date.now() + ${WATCHDOG_STOP_WAIT_MS}
  setInterval(() => {
    if (!alive(serverPid)) process.exit(0)
    if (Date.now() < deadline) return
    try { process.kill(serverPid, "SIGKILL") } catch {}
    process.exit(0)
  }, 100)
}, ${WATCHDOG_POLL_MS})
`

/** Starts the watchdog of `serverPid` for this process; it outlives us by design. Its pid. */
export const watchServer = (serverPid: number, nodePid = process.pid): number | undefined => {
  if (serverPid <= 0) return undefined
  const child = spawn(process.execPath, ["-e", script, String(nodePid), String(serverPid)], { detached: true, stdio: "ignore" })
  child.unref()
  return child.pid
}
