// The SSE clients of `bench -- marketdata` and `bench -- fanout`, forked as their own process so
// they do not share the server's or the load generator's event loop: BENCH_SSE_N streams to
// BENCH_SSE_URL, and per trade event received, now − the event's `E` (the delta's publish time on
// the owner; same machine, same clock). Its CPU is reported with the delays, so a bench can show
// what the clients cost beside what the server spends.
//
// Protocol (IPC): "open?" → { open, closed }; "reset" → the window opens: delays so far are
// dropped and CPU is counted from here; "done" → { delays, events, bytes, cpuMs, wallMs } and exit.
import { request } from "node:http"

const url = process.env.BENCH_SSE_URL
const n = Number(process.env.BENCH_SSE_N)
if (url === undefined || !Number.isInteger(n) || n <= 0) throw new Error("BENCH_SSE_URL and BENCH_SSE_N must be set")

const tradeAt = "event: trade\ndata: "
let delays: Array<number> = []
let events = 0
let bytes = 0
let open = 0
let closed = 0
let cpu0 = process.cpuUsage()
let wall0 = Date.now()

/** Streams opened per step, a step every rampMs: a listen backlog takes a few hundred at once. */
const rampStep = 250
const rampMs = 20

const openOne = () => {
  const req = request(url, (res) => {
    res.setEncoding("utf8")
    let buf = ""
    res.on("data", (chunk: string) => {
      bytes += chunk.length
      buf += chunk
      for (let k = buf.indexOf("\n\n"); k >= 0; k = buf.indexOf("\n\n")) {
        const block = buf.slice(0, k)
        buf = buf.slice(k + 2)
        events++
        if (block.includes("event: open")) open++
        const at = block.indexOf(tradeAt)
        if (at >= 0) delays.push(Date.now() - (JSON.parse(block.slice(at + tradeAt.length)) as { E: number }).E)
      }
    })
    res.on("close", () => closed++)
  })
  req.on("error", () => {
    closed++
  })
  req.end()
}
for (let i = 0; i < n; i += rampStep) setTimeout(() => {
  for (let k = i; k < Math.min(n, i + rampStep); k++) openOne()
}, (i / rampStep) * rampMs)

process.on("message", (m: string) => {
  if (m === "open?") process.send!({ open, closed })
  if (m === "reset") {
    delays = []
    events = 0
    bytes = 0
    cpu0 = process.cpuUsage()
    wall0 = Date.now()
  }
  if (m === "done") {
    const cpu = process.cpuUsage(cpu0)
    process.send!({ delays, events, bytes, cpuMs: (cpu.user + cpu.system) / 1000, wallMs: Date.now() - wall0 }, () => process.exit(0))
  }
})
