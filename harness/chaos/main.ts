// `npm run chaos -- --seed S --minutes M [--nodes 3]`: a seeded fault campaign over a whole
// Shardline cluster (Jepsen's nemesis and checker, TigerBeetle VOPR's seed). It prints the
// schedule, runs the workload and the nemesis together, lets the system settle, then checks the
// history and the final state. Exit 0 only with 0 violations; a violation prints the seed, the
// schedule up to it, and the smallest history that shows it.
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { checkRun, type Checked } from "./checker.ts"
import { runTrader, sampleBook, setUpExchange, type BookSample, type TraderStats } from "./exchangeWorkload.ts"
import { makeHistory } from "./history.ts"
import { runNemesis, type AppliedFault } from "./nemesis.ts"
import { makeRng } from "./rng.ts"
import { describeFault, makeSchedule } from "./schedule.ts"
import { faultWindows } from "./windows.ts"
import { digestLines, digestLogs } from "./logDigest.ts"
import { checkSocial } from "./socialChecker.ts"
import { checkDesk, depositOnLitecoind, goneForGood } from "./deskChecker.ts"
import { runDeskCustomer, runVisitor, setUpDesk, type DeskRun } from "./deskWorkload.ts"
import { runMember, setUpSocial, type SocialRun } from "./socialWorkload.ts"
import { startWorld, type World } from "./world.ts"
import { pollFor } from "../omniIssuer.ts"

const { values } = parseArgs({
  options: {
    seed: { type: "string", default: String(Date.now() % 1_000_000) },
    minutes: { type: "string", default: "3" },
    nodes: { type: "string", default: "3" },
    traders: { type: "string", default: "6" },
    members: { type: "string", default: "3" },
    "desk-customers": { type: "string", default: "3" },
    visitors: { type: "string", default: "2" },
    "mean-gap-s": { type: "string", default: "20" }
  }
})
const seed = Number(values.seed)
const minutes = Number(values.minutes)
const nodeCount = Number(values.nodes)
if (!Number.isInteger(seed) || seed < 0 || !(minutes > 0 && minutes <= 600) || !Number.isInteger(nodeCount) || nodeCount < 2 || nodeCount > 5) {
  console.error("usage: npm run chaos -- --seed <non-negative integer> --minutes <0..600> [--nodes 2..5] [--traders N] [--mean-gap-s S]")
  process.exit(2)
}
const durationMs = Math.round(minutes * 60_000)
const rng = makeRng(seed)
const log = (s: string) => console.log(s)
const schedule = makeSchedule(rng.fork("nemesis"), {
  durationMs, nodes: nodeCount, meanGapMs: Number(values["mean-gap-s"]) * 1000,
  quietHeadMs: Math.min(15_000, durationMs / 6), quietTailMs: Math.min(40_000, durationMs / 4)
})
log(`chaos: seed ${seed}, ${minutes} min, ${nodeCount} nodes; schedule (${schedule.length} faults):`)
for (const s of schedule) log(`  ${(s.atMs / 1000).toFixed(1).padStart(7)} s  ${describeFault(s.fault)}`)

/** Every node process's output (each life of each slot) written under the temp dir, for a run with a violation; the folder. */
const keepNodeLogs = (w: World, s: number): string => {
  const dir = mkdtempSync(join(tmpdir(), `shardline-chaos-seed${s}-`))
  for (const slot of w.nodes) for (const n of slot.lives) writeFileSync(join(dir, `node${slot.index + 1}-pid${n.pid}.log`), n.output())
  return dir
}

/** After the load stops: how long the system may take to finish what it owes (legs final, expired grants swept, owed stamps sent). */
const SETTLE_MS_MAX = 240_000

const world = await startWorld({ nodes: nodeCount, log }).catch((e) => {
  console.error(`chaos: the world did not start (seed ${seed}): ${e instanceof Error ? e.message : String(e)}`)
  process.exit(1)
})
let exit = 1
try {
  // The desk first: its setup mines the ledger and issues its tokens, which the exchange's grant timing must not absorb.
  const desk = await setUpDesk(world, { customers: Number(values["desk-customers"]), log })
  // Grants are made during the setup, before the run's clock starts: their mid-run expiries are
  // drawn against the moment the setup is expected to end (it takes well under this on one core).
  const runStartEpochMs = Date.now() + 60_000
  const ex = await setUpExchange(world, rng.fork("setup"), { traders: Number(values.traders), runStartMs: runStartEpochMs, durationMs, log })
  const members = await setUpSocial(world, Number(values.members))
  const social: SocialRun = { posts: [], stats: { published: 0, comments: 0, renewals: 0, takedowns: 0, neverAnswered: 0 }, unanswered: [] }
  // The run's clock starts now; grants' expiries were drawn against an estimate of this moment.
  const t0 = Date.now()
  const clock = () => Date.now() - t0
  const history = makeHistory()
  const book: Array<BookSample> = []
  const stopMiner = ex.startMiner(1_000)
  const stopEvmMiner = desk.startEvmMiner(1_000)
  const deskRun: DeskRun = { orders: [], stats: { created: 0, deposits: 0, depositFailures: 0, released: 0, refused: 0, neverAnswered: 0, signIns: 0, links: 0, rewardsReads: 0, signInRestarts: 0 }, unanswered: [] }
  const stats: TraderStats = { placed: 0, cancelled: 0, refused: 0, neverAnswered: 0 }
  const stopLoadAt = durationMs
  const [applied] = await Promise.all([
    runNemesis(world, schedule, clock, log),
    ...ex.traders.map((t) => runTrader(world, t, history, rng.fork(`trader ${t.name}`), clock, stopLoadAt, stats)),
    sampleBook(world, rng.fork("book"), clock, stopLoadAt, 1_000, book),
    ...members.map((m) => runMember(world, m, social, history, rng.fork(`member ${m.name}`), clock, stopLoadAt)),
    ...desk.customers.map((c) => runDeskCustomer(world, desk, c, deskRun, history, rng.fork(`desk customer ${c.name}`), clock, stopLoadAt)),
    ...Array.from({ length: Number(values.visitors) }, (_, i) => runVisitor(world, `v${i}`, deskRun, history, rng.fork(`visitor v${i}`), clock, stopLoadAt))
  ]) as [ReadonlyArray<AppliedFault>, ...Array<unknown>]
  log(`load over at ${(clock() / 1000).toFixed(1)} s: ${stats.placed} orders acknowledged, ${stats.cancelled} cancelled, ${stats.refused} refused, ${stats.neverAnswered} never answered`)
  log(`  desk: ${deskRun.stats.created} orders created, ${deskRun.stats.deposits} deposits paid, ${deskRun.stats.released} seen released, ${deskRun.stats.refused} refused; ${deskRun.stats.signIns} sign-ins, ${deskRun.stats.links} wallet links`)

  // Settle: every node back, every leg final, every expired grant swept and its key gone.
  for (const slot of world.nodes) if (slot.current === undefined || !slot.current.isRunning()) await world.startNode(slot.index)
  const paid = () => deskRun.orders.filter((o) => o.depositTxid !== undefined).map((o) => o.id)
  /** Paid orders still waiting whose deposit a reorg dropped for good: nothing will end them, so the settle does not wait. */
  const lostDeposits = new Set<string>()
  const waitingOnLostDeposits = async (ids: ReadonlyArray<string>) => {
    for (const id of ids) {
      const o = deskRun.orders.find((x) => x.id === id)
      if (o !== undefined && !lostDeposits.has(id) && goneForGood(await depositOnLitecoind(world, o))) lostDeposits.add(id)
    }
  }
  await pollFor("the system to settle (legs final, expired grants swept, owed stamps sent, paid desk orders ended)", SETTLE_MS_MAX, async () => {
    const [legs] = await world.query<{ open: number }>(`SELECT count(*)::int AS open FROM settlement_legs WHERE status <> 'final'`)
    const due = ex.traders.filter((t) => t.expiresAtMs < Date.now()).map((t) => t.grantId)
    const [keys] = await world.query<{ n: number }>(`SELECT count(*)::int AS n FROM authorization_keys WHERE grant_id = ANY($1)`, [due])
    const [stamps] = await world.query<{ n: number }>(`SELECT (SELECT count(*) FROM social_stamping_pending) + (SELECT count(*) FROM social_owed_stamps WHERE txid IS NULL) AS n`)
    const deskOpen = await world.query<{ id: string; status: string }>(`SELECT id::text, status FROM desk_orders WHERE id = ANY($1::uuid[]) AND status NOT IN ('released', 'refunded', 'expired', 'failed')`, [paid()])
    await waitingOnLostDeposits(deskOpen.filter((r) => r.status === "awaiting_deposit").map((r) => r.id))
    const deskOwed = deskOpen.filter((r) => !lostDeposits.has(r.id)).length
    return legs!.open === 0 && keys!.n === 0 && Number(stamps!.n) === 0 && deskOwed === 0 ? true : undefined
  }, 2_000).catch((e) => log(`settle: ${String(e)} (the checker reports what is still owed)`))
  // What was broadcast last (an expired grant's sweep is sent just before its key goes, which ends
  // the settle) is mined before the miner stops and the checker reads the chain.
  await pollFor("the ledger's mempool mined", 30_000, async () => ((await world.litecoind.rpc<{ size: number }>("getmempoolinfo")).size === 0 ? true : undefined), 500)
    .catch((e) => log(`settle: ${String(e)} (the checker reads the chain as it is)`))
  await stopMiner()
  await stopEvmMiner()

  const windows = faultWindows(applied)
  const exchangeChecked = await checkRun(world, ex, history, book, windows, t0)
  const socialChecked = await checkSocial(world, social, history)
  const deskChecked = await checkDesk(world, desk, deskRun, history, windows, t0)
  for (const u of deskRun.unanswered) deskChecked.violations.push({ rule: "every request answered", detail: `${u.op} ${u.subject}: no answer below 500 within the request's deadline`, history: history.about(u.subject) })
  const checked: Checked = { violations: [...exchangeChecked.violations, ...socialChecked.violations, ...deskChecked.violations], counts: { ...exchangeChecked.counts, ...socialChecked.counts, ...deskChecked.counts } }
  await ex.dispose()
  log("")
  log(`summary: seed ${seed}, ${minutes} min, ${nodeCount} nodes`)
  log(`  faults injected: ${applied.length} (${applied.filter((a) => a.note.startsWith("could not")).length} could not apply, ${applied.filter((a) => a.note === "already down").length} on a node already down)`)
  for (const [k, n] of Object.entries(checked.counts)) log(`  ${k}: ${n}`)
  // Requests per service: the exchange's orders and cancels, social's posts, the desk's orders, polls and deposits, sign-ins by listener.
  const serviceOf = (op: string) => op.startsWith("exchange ") || op === "order" || op === "cancel" ? "exchange"
    : op.startsWith("social ") || ["publish", "comment", "renew", "takedown"].includes(op) ? "social" : "desk"
  const perService = new Map<string, number>()
  for (const e of history.entries) perService.set(serviceOf(e.op), (perService.get(serviceOf(e.op)) ?? 0) + 1)
  log(`  requests per service (sign-ins counted with their listener; desk includes its customers' deposit sends): ${[...perService].map(([k, n]) => `${k} ${n}`).join(", ")}`)
  log(`violations: ${checked.violations.length}`)
  // Only the first 20 are printed whole; the count per rule says what the rest are.
  const byRule = new Map<string, number>()
  for (const v of checked.violations) byRule.set(v.rule, (byRule.get(v.rule) ?? 0) + 1)
  const byRuleText = [...byRule].sort((a, b) => b[1] - a[1]).map(([rule, n]) => `${rule} ×${n}`).join("; ")
  if (byRule.size > 0) log(`violations by rule: ${byRuleText}`)
  for (const viol of checked.violations.slice(0, 20)) {
    log(`\nVIOLATION [${viol.rule}] ${viol.detail}`)
    log(`  seed ${seed}; schedule up to it: ${applied.map((a) => `${(a.startedAtMs / 1000).toFixed(1)} s ${describeFault(a.fault)}`).join("; ")}`)
    for (const e of viol.history.slice(0, 12)) log(`  ${(e.atMs / 1000).toFixed(1)} s ${e.client} ${e.op} ${e.node} ${JSON.stringify(e.params)} → ${JSON.stringify(e.outcome).slice(0, 300)}`)
    for (const line of viol.trail ?? []) log(`  storage: ${line}`)
  }
  if (checked.violations.length > 0) {
    log(`\nnode logs: ${keepNodeLogs(world, seed)}`)
    // CI keeps only the tail of this output and not the folder above: the nodes' warnings and errors, folded, close it.
    const logs = world.nodes.flatMap((slot) => slot.lives.map((n) => ({ node: `node${slot.index + 1}/${n.pid}`, text: n.output() })))
    log(`node warnings and errors (run clock; numbers and ids folded):`)
    for (const line of digestLines(digestLogs(logs, t0), 30)) log(line)
    log(`violations by rule (again): ${byRuleText}`)
  }
  exit = checked.violations.length === 0 ? 0 : 1
} catch (e) {
  log(`chaos run failed (seed ${seed}): ${e instanceof Error ? e.stack ?? e.message : String(e)}`)
  exit = 1
} finally {
  await world.stop()
}
process.exit(exit)
