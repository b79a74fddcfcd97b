// The token desk's rules at the end of a chaos run, read from Postgres and the chains themselves
// (our own Omni index of the final ledger from genesis, anvil, litecoind):
// - every order the workload paid ended (released or refunded), and every payout and refund is on
//   its chain exactly once: a grant on the ledger with the order's reference as memo (mints,
//   wraps), one USDC transfer to the order's own payout address (cash-outs, redeems), one output
//   to the fresh LTC address or exactly the payout in wei at the fresh ETH address (unwraps);
// - each wrapped token's supply on the ledger = what the desk granted − what it revoked, and the
//   grants are what the desk's released orders pay;
// - every attestation: reserves ≥ supply (the dollar pool and each wrapped token), the series a
//   valid hash chain (verifySeries: hashes, chain links, Ed25519), no gap beyond the interval
//   outside fault windows; the Attestor's tick lateness, split inside/outside fault windows;
// - the desk's other durable timers (desk_timer_firings): each order Tick and link token Expire
//   fired once (no redelivery outside fault windows; every expired token's Expire fired, for its
//   expiry), no order's Tick chain quiet beyond its tick outside fault windows, and how late they
//   fired, inside and outside fault windows.
import { Effect } from "effect"
import type { EvmLedger, TransferLog } from "../../src/chain/evm/EvmLedger.ts"
import { syncOnce } from "../../src/chain/ledger/follower.ts"
import { makeRpcLedger } from "../../src/chain/ledger/rpcLedger.ts"
import { ledgerParams, litecoinRegtestParams } from "../../src/chain/params.ts"
import { type AttestationPoint, verifySeries } from "../../src/desk/attestation/attestation.ts"
import { EXPIRED_TICK_MS } from "../../src/desk/orders/DeskOrderEntity.ts"
import { urlWithCredentials } from "../litecoind.ts"
import { omniChainIndex } from "../omniChainIndex.ts"
import type { Violation } from "./checker.ts"
import { messageTrail } from "./messageTrail.ts"
import { DESK_TOKENS, type DeskRun, type DeskWorld } from "./deskWorkload.ts"
import { attestationGaps, reservesShort } from "./deskRules.ts"
import { distribution, type Firing, latenessSplit, linkExpiryProblems, percentile, redeliveredOutsideFaults, tickChainGaps } from "./timerRules.ts"
import type { History } from "./history.ts"
import type { Window } from "./windows.ts"
import { attestationIntervalMs, type World } from "./world.ts"

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)

/**
 * Every transfer of `token` to `to` from block 0 to the head, page by page: one `transfers` call
 * reads at most the ledger's `scanBlocksMax` blocks (a 30-minute run's base chain passes 2,000,
 * and the payouts above them read as missing).
 */
const allTransfers = async (ledger: EvmLedger, token: string, to: string) => {
  const head = await run(ledger.blockNumber)
  const logs: Array<TransferLog> = []
  for (let from = 0n; from <= head;) {
    const page = await run(ledger.transfers(token, from, head, { to: [to] }))
    logs.push(...page.logs)
    from = page.nextBlock
  }
  return logs
}
/** An attestation may come this much after its slot before the gap counts (a scan of every vault, a busy node). */
const ATTESTATION_SLACK_MS = 10_000
/** An order's Tick chain may be quiet this long outside fault windows (its 3 s tick behind a slow advance on a loaded box). */
const TICK_CHAIN_QUIET_MS = 30_000
/** An expired order ticks every EXPIRED_TICK_MS: its chain may be quiet that much longer. */
const EXPIRED_TICK_CHAIN_QUIET_MS = TICK_CHAIN_QUIET_MS + EXPIRED_TICK_MS
/** A link token expired this long before the check must have had its Expire fire (the timer's poll, a busy node). */
const LINK_EXPIRE_GRACE_MS = 30_000

type LitecoindTx = { readonly confirmations?: number; readonly blockhash?: string } | { readonly error: string }

/** A paid order's deposit as litecoind sees it (undefined for deposits on an EVM chain). */
export const depositOnLitecoind = (world: World, o: { readonly kind: string; readonly asset: string; readonly depositTxid?: string | undefined }): Promise<LitecoindTx | undefined> =>
  o.depositTxid === undefined || o.kind === "mint" || (o.kind === "wrap" && o.asset === "ETH") ? Promise.resolve(undefined)
    : world.litecoind.rpc<{ confirmations?: number; blockhash?: string }>("getrawtransaction", o.depositTxid, true).catch((e: unknown) => ({ error: String(e).slice(0, 120) }))

/**
 * The customer's send gone from the best chain and the mempool (a reorg dropped it and its inputs
 * with it: litecoind knows it not at all, or only in a block off the best chain, 0 confirmations):
 * the desk rightly still waits for a deposit. Not the desk's; counted apart, and not waited for.
 */
export const goneForGood = (tx: LitecoindTx | undefined): boolean =>
  tx !== undefined && ("error" in tx ? /No such mempool or blockchain transaction/.test(tx.error) : (tx.confirmations ?? 0) === 0 && tx.blockhash !== undefined)

export const checkDesk = async (world: World, desk: DeskWorld, deskRun: DeskRun, history: History, windows: ReadonlyArray<Window>, runStartEpochMs: number): Promise<{ violations: Array<Violation>; counts: Record<string, number | string> }> => {
  const v: Array<Violation> = []
  const add = (rule: string, detail: string, subject?: string, trail?: ReadonlyArray<string>) =>
    v.push({ rule, detail, history: subject === undefined ? [] : history.about(subject), ...(trail === undefined ? {} : { trail }) })
  const ledger = makeRpcLedger({ url: urlWithCredentials(world.litecoind), params: ledgerParams, nodeParams: litecoinRegtestParams })
  const ltc = makeRpcLedger({ url: urlWithCredentials(world.litecoind), params: litecoinRegtestParams, nodeParams: litecoinRegtestParams })
  const chain = omniChainIndex()
  await run(syncOnce(ledger, chain.consumer))
  const valid = chain.records.filter((r) => r.valid)

  const rows = await world.query<{ id: string; short_ref: string; kind: string; asset: string; chain: string | null; status: string; amount: string; payout: string; payout_address: string | null; deposit_address: string; failure: string | null }>(
    `SELECT id::text, short_ref, kind, asset, chain, status, amount::text, payout::text, payout_address, deposit_address, failure FROM desk_orders`)
  const legs = await world.query<{ order_id: string; leg: string; chain: string; txid: string }>(`SELECT order_id::text, leg, chain, txid FROM desk_order_legs`)
  const byId = new Map(rows.map((r) => [r.id, r]))
  const legsOf = (id: string, leg: string) => legs.filter((l) => l.order_id === id && l.leg === leg)

  // Every order the workload paid for ended, and what it pays is on its chain exactly once.
  let paidOut = 0
  const invalidDeposits: Array<string> = []
  let refundedOnce = 0
  /** Orders still waiting whose deposit no chain has any more (a reorg dropped the customer's send for good). */
  let depositsLost = 0
  for (const o of deskRun.orders.filter((x) => x.depositTxid !== undefined)) {
    const row = byId.get(o.id)
    if (row === undefined) { add("every acknowledged desk order exists", `${o.kind} ${o.shortRef} (${o.id}) is not in desk_orders`, o.shortRef); continue }
    // A token deposit the ledger found invalid (sent ahead of the grant funding it, reordered by a
    // reorg) never reached the desk: the customer's doing, counted, not the desk's violation.
    const deposit = o.depositTxid === undefined ? undefined : chain.records.find((r) => r.txid === o.depositTxid)
    if (row.status === "awaiting_deposit" && deposit !== undefined && !deposit.valid) { invalidDeposits.push(`${o.shortRef}: ${deposit.reason ?? "invalid"}`); continue }
    if (row.status !== "released" && row.status !== "refunded") {
      // Where the deposit stands on its chain: a deposit never confirmed is the customer's; one in the best chain the desk did not act on is the desk's.
      const tx = await depositOnLitecoind(world, o)
      const where = deposit !== undefined ? `in the ledger at height ${deposit.height}, ${deposit.valid ? "valid" : `invalid: ${deposit.reason}`}` : "not in the final ledger by our index"
      if (deposit === undefined && goneForGood(tx) && (row.status === "awaiting_deposit" || row.status === "expired")) {
        depositsLost++
        continue
      }
      add("every paid desk order ends", `${o.kind} ${o.shortRef}: ${row.status}${row.failure === null ? "" : ` (${row.failure})`}; its deposit ${o.depositTxid} is ${where}; litecoind: ${JSON.stringify(tx === undefined ? "-" : "error" in tx ? tx.error : { confirmations: tx.confirmations ?? 0, blockhash: tx.blockhash ?? null })}`, o.shortRef)
      continue
    }
    if (row.status === "refunded") {
      // A refund of a token deposit: the one valid send out of the order's deposit address, by the refund leg.
      const refund = legsOf(o.id, "refund")
      // (a mint's or wrap's refund is on its own chain: the refund legs are checked below)
      if (o.kind !== "cashout" && o.kind !== "redeem" && o.kind !== "unwrap") continue
      const sends = valid.filter((r) => r.sender === row.deposit_address && r.payload?.type === "simpleSend")
      if (sends.length !== 1 || sends[0]!.txid !== refund[0]?.txid) add("every desk refund on chain exactly once", `${o.kind} ${o.shortRef}: ${sends.length} valid sends out of ${row.deposit_address} (${sends.map((r) => r.txid).join(", ")}), refund leg ${refund[0]?.txid ?? "none"}`, o.shortRef)
      else refundedOnce++
      continue
    }
    const payout = legsOf(o.id, "payout")
    const grants = valid.filter((r) => r.payload?.type === "grant" && (r.payload as { memo?: string }).memo === o.shortRef)
    if (o.kind === "mint" || o.kind === "wrap") {
      const want = BigInt(row.payout)
      if (grants.length !== 1 || grants[0]!.txid !== payout[0]?.txid) add("every desk payout on chain exactly once", `${o.kind} ${o.shortRef}: ${grants.length} valid grants on the ledger (${grants.map((g) => g.txid).join(", ")}), payout leg ${payout[0]?.txid ?? "none"}`, o.shortRef)
      else if (BigInt((grants[0]!.payload as { amount: bigint }).amount) !== want || grants[0]!.reference !== o.payoutAddress) add("every desk payout on chain exactly once", `${o.kind} ${o.shortRef}: grant of ${(grants[0]!.payload as { amount: bigint }).amount} to ${grants[0]!.reference}, order pays ${want} to ${o.payoutAddress}`, o.shortRef)
      else paidOut++
    } else if (o.kind === "cashout" || o.kind === "redeem") {
      const logs = await allTransfers(desk.base, world.usdc, row.payout_address!)
      const want = BigInt(row.payout)
      const got = logs.reduce((s, l) => s + l.value, 0n)
      if (logs.length !== 1 || logs[0]!.txHash !== payout[0]?.txid || got !== want) add("every desk payout on chain exactly once", `${o.kind} ${o.shortRef}: ${logs.length} USDC transfers to ${row.payout_address} (${got} of ${want}), payout leg ${payout[0]?.txid ?? "none"}`, o.shortRef)
      else paidOut++
    } else if (o.asset === "LTC") {
      const utxos = await run(ltc.listUnspent([row.payout_address!]))
      const want = BigInt(row.payout)
      if (utxos.length !== 1 || utxos[0]!.txid !== payout[0]?.txid || utxos[0]!.value !== want) add("every desk payout on chain exactly once", `unwrap ${o.shortRef}: ${utxos.length} outputs at ${row.payout_address} (${utxos.map((u) => `${u.txid}:${u.value}`).join(", ")}), want ${want} from ${payout[0]?.txid ?? "no leg"}`, o.shortRef)
      else paidOut++
    } else {
      const want = BigInt(row.payout)
      const got = await run(desk.ethereum.nativeBalance(row.payout_address!))
      const depth = payout[0] === undefined ? 0 : await run(desk.ethereum.confirmations(payout[0].txid)).catch(() => 0)
      if (got !== want || depth < 1) add("every desk payout on chain exactly once", `unwrap ${o.shortRef}: ${row.payout_address} holds ${got} wei, the order pays ${want}; payout leg ${payout[0]?.txid ?? "none"} at depth ${depth}`, o.shortRef)
      else paidOut++
    }
    // What the order takes in is burned once (cash-outs, redeems, unwraps revoke the received tokens).
    if (o.kind === "cashout" || o.kind === "redeem" || o.kind === "unwrap") {
      const revokes = valid.filter((r) => r.payload?.type === "revoke" && (r.payload as { memo?: string }).memo === o.shortRef)
      if (revokes.length !== 1) add("every desk burn on chain exactly once", `${o.kind} ${o.shortRef}: ${revokes.length} valid revokes on the ledger`, o.shortRef)
    }
  }
  // Every refund leg is on its chain (once: the leg's primary key is (order, leg)).
  let refunds = 0
  for (const l of legs.filter((x) => x.leg === "refund")) {
    const row = byId.get(l.order_id)
    const confirmed = l.chain === "ledger" ? valid.some((r) => r.txid === l.txid)
      : l.chain === "ltc" ? ((await world.litecoind.rpc<{ confirmations?: number }>("getrawtransaction", l.txid, true).catch(() => undefined))?.confirmations ?? 0) >= 1
      : (await run((l.chain === "ethereum" ? desk.ethereum : desk.base).confirmations(l.txid)).catch(() => 0)) >= 1
    if (!confirmed) add("every desk refund on chain exactly once", `${row?.kind} ${row?.short_ref}: refund ${l.txid} on ${l.chain} is not on the chain`, row?.short_ref)
    else refunds++
  }

  // Supply: each desk token's total on the ledger = its grants − its revokes, and its grants are the released orders' payouts.
  const supplies: Array<string> = []
  for (const code of DESK_TOKENS) {
    const property = desk.properties[code]
    const moved = (type: "grant" | "revoke") => valid.reduce((s, r) => (r.payload?.type === type && r.payload.property === property ? s + r.payload.amount : s), 0n)
    const granted = moved("grant")
    const revoked = moved("revoke")
    const total = chain.indexer.property(property)?.totalTokens ?? 0n
    if (total !== granted - revoked) add("wrapped supply = minted − burned", `${code}: supply ${total} on the ledger, granted ${granted} − revoked ${revoked} = ${granted - revoked}`)
    const kind = code === "SUSD" ? "mint" : "wrap"
    const owed = rows.filter((r) => r.kind === kind && r.asset === code && r.status === "released").reduce((s, r) => s + BigInt(r.payout), 0n)
    if (owed !== granted) add("wrapped supply = minted − burned", `${code}: the ledger granted ${granted}, the desk's released ${kind}s pay ${owed}`)
    // What it revoked is what the released burning orders took in (the received tokens, all burned).
    const burning = rows.filter((r) => r.kind !== kind && r.asset === code && r.status === "released")
    const burnRefs = new Set(burning.map((b) => b.short_ref))
    const revokedByOrders = valid.reduce((s, r) => {
      const p = r.payload
      return p?.type === "revoke" && p.property === property && burnRefs.has(p.memo) ? s + p.amount : s
    }, 0n)
    if (revokedByOrders !== revoked) add("wrapped supply = minted − burned", `${code}: the ledger revoked ${revoked}, of which ${revokedByOrders} by the desk's released burning orders`)
    supplies.push(`${code} ${total}`)
  }

  // The attestation series, as the database holds it.
  const points = (await world.query<{ seq: string; attested_at: Date; payload: string; payload_hash: string; prev_hash: string | null; signature: string; ed25519_signature: string; request_id: string | null }>(
    `SELECT seq::text, attested_at, payload, payload_hash, prev_hash, signature, ed25519_signature, request_id FROM desk_attestations ORDER BY desk_attestations.seq`))
  const series: Array<AttestationPoint> = points.map((p) => ({
    seq: Number(p.seq), attestedAt: p.attested_at.toISOString(), payload: JSON.parse(p.payload), payload_hash: p.payload_hash,
    previousPayloadHash: p.prev_hash, signature: p.signature, ed25519Signature: p.ed25519_signature
  }))
  const [key] = await world.query<{ public: string | null }>(`SELECT public FROM desk_secrets WHERE name = 'attestation-ed25519'`).catch(() => [{ public: null }])
  if (key?.public != null && key.public !== "") {
    for (const problem of verifySeries(series, { publicKey: key.public, nowMs: Date.now() }).problems) add("the attestation series is a valid hash chain", problem)
  } else {
    // Without the published key the chain links and hashes are still checked (the signatures are not).
    for (const problem of verifySeries(series, { publicKey: "0".repeat(64), nowMs: Date.now() }).problems.filter((p) => !p.includes("Ed25519"))) add("the attestation series is a valid hash chain", problem)
  }
  for (const p of series) for (const short of reservesShort(p.payload as Record<string, unknown>)) add("reserves ≥ supply at every attestation", `attestation ${p.seq} (${p.attestedAt}): ${short}`)
  // Gaps: between two attestations (the run's start and the check counting as edges) no more than
  // the interval plus slack of time outside fault windows. Only the run's own span is judged.
  const runEndMs = Date.now()
  const times = series.map((p) => Date.parse(p.attestedAt)).filter((t) => t >= runStartEpochMs)
  const gaps = times.slice(1).map((t, i) => t - times[i]!)
  for (const g of attestationGaps(times, { runStartMs: runStartEpochMs, runEndMs, allowedMs: attestationIntervalMs + ATTESTATION_SLACK_MS, windows })) {
    add("no attestation gap beyond the interval outside faults", `${(g.fromMs / 1000).toFixed(1)} s → ${(g.toMs / 1000).toFixed(1)} s: no attestation for ${g.toMs - g.fromMs} ms, ${g.quietMs} ms of it outside fault windows (interval ${attestationIntervalMs} ms + ${ATTESTATION_SLACK_MS} ms allowed)`)
  }
  // The Attestor's durable timer: a tick's attestation is due at its slot (a whole multiple of the
  // interval); how late it was written, inside and outside fault windows (on-demand ones, with a
  // request id, and a start's catch-up are not ticks: a catch-up shows as lateness up to one interval).
  const ticked = points.filter((p) => p.request_id === null).map((p) => p.attested_at.getTime())
  const attestorLate = latenessSplit(ticked.map((at) => ({ dueMs: Math.floor(at / attestationIntervalMs) * attestationIntervalMs, firedMs: at })), windows, runStartEpochMs)

  // The desk's other durable timers: every order Tick and link token Expire as it fired.
  const timers = await checkDeskTimers(world, windows, runStartEpochMs, add)
  const desks = rows.length
  // What the desk and the sign-in listeners refused, one line per code with its first message (a definite answer is allowed; this says why).
  const refusals = new Map<string, { n: number; message: string }>()
  for (const e of history.entries) {
    if (e.outcome.kind !== "answer" || e.outcome.status < 400 || e.outcome.status >= 500 || e.op === "order" || e.op === "cancel") continue
    const b = e.outcome.body as { error?: { code?: string; message?: string } }
    const k = `${e.op} ${b?.error?.code ?? e.outcome.status}`
    const seen = refusals.get(k)
    refusals.set(k, { n: (seen?.n ?? 0) + 1, message: seen?.message ?? String(b?.error?.message ?? "").slice(0, 200) })
  }
  return {
    violations: v,
    counts: {
      "desk orders created (all customers)": desks,
      "desk and sign-in refusals": [...refusals].map(([k, r]) => `${k} ×${r.n} ("${r.message}")`).join("; ") || "none",
      "desk orders paid by the workload": deskRun.orders.filter((o) => o.depositTxid !== undefined).length,
      "desk orders by kind": Object.entries(rows.reduce<Record<string, number>>((m, r) => ({ ...m, [`${r.kind} ${r.asset}`]: (m[`${r.kind} ${r.asset}`] ?? 0) + 1 }), {})).map(([k, n]) => `${k}: ${n}`).join(", ") || "none",
      "desk orders by status": Object.entries(rows.reduce<Record<string, number>>((m, r) => ({ ...m, [r.status]: (m[r.status] ?? 0) + 1 }), {})).map(([k, n]) => `${k}: ${n}`).join(", ") || "none",
      "desk payouts checked on chain": paidOut,
      "desk token deposits the ledger found invalid (the customer's, not the desk's)": `${invalidDeposits.length}${invalidDeposits.length === 0 ? "" : ` (${invalidDeposits.slice(0, 3).join("; ")})`}`,
      "desk refunds on chain": `${refunds} (token refunds checked once from their deposit address: ${refundedOnce})`,
      "desk deposits a reorg dropped for good (the customer's; their orders still wait, rightly)": String(depositsLost),
      "desk deposit sends that failed": `${deskRun.stats.depositFailures}${deskRun.depositFailureSample === undefined ? "" : ` (first: ${deskRun.depositFailureSample.slice(0, 200)})`}`,
      "desk requests never answered": deskRun.stats.neverAnswered,
      "desk token supply (base units)": supplies.join(", "),
      "sign-ins completed / restarted": `${deskRun.stats.signIns} / ${deskRun.stats.signInRestarts}`,
      "wallet links / rewards reads": `${deskRun.stats.links} / ${deskRun.stats.rewardsReads}`,
      attestations: `${series.length} (${times.length} in the run; gap p50/max ${percentile(gaps, 50)}/${Math.max(0, ...gaps)} ms)`,
      "attestor tick lateness outside faults, ms (p50/p99/max)": distribution(attestorLate.outside),
      "attestor tick lateness inside faults, ms (p50/p99/max)": distribution(attestorLate.inside),
      ...timers
    }
  }
}

/**
 * The desk orders' Tick and the link tokens' Expire, from desk_timer_firings (written by the entity
 * that owns each timer when it fires): the rules above, and the lateness lines for the summary.
 */
const checkDeskTimers = async (
  world: World, windows: ReadonlyArray<Window>, runStartEpochMs: number,
  add: (rule: string, detail: string, subject?: string, trail?: ReadonlyArray<string>) => void
): Promise<Record<string, string>> => {
  const rows = await world.query<{ timer: string; entity_id: string; due_ms: number; fired_ms: number; last_ms: number; deliveries: number }>(
    `SELECT timer, entity_id, (extract(epoch FROM due_at) * 1000)::float8 AS due_ms, (extract(epoch FROM fired_at) * 1000)::float8 AS fired_ms,
      (extract(epoch FROM last_fired_at) * 1000)::float8 AS last_ms, deliveries FROM desk_timer_firings`)
  const checkMs = Date.now()
  const firingsOf = (timer: string): Array<Firing> => rows.filter((r) => r.timer === timer)
    .map((r) => ({ entityId: r.entity_id, dueMs: r.due_ms, firedMs: r.fired_ms, lastFiredMs: r.last_ms, deliveries: r.deliveries }))
  const ticks = firingsOf("order_tick")
  const expires = firingsOf("link_expire")
  const orders = await world.query<{ id: string; short_ref: string; status: string; created_ms: number }>(
    `SELECT id::text, short_ref, status, (extract(epoch FROM created_at) * 1000)::float8 AS created_ms FROM desk_orders`)
  const refOf = new Map(orders.map((o) => [o.id, o.short_ref]))
  for (const f of redeliveredOutsideFaults([...ticks, ...expires], windows, runStartEpochMs)) {
    const what = refOf.has(f.entityId) ? `order ${refOf.get(f.entityId)}'s Tick` : `link token ${f.entityId.slice(0, 12)}…'s Expire`
    add("every desk timer fired once", `${what} due ${new Date(f.dueMs).toISOString()}: delivered ${f.deliveries} times, the last at ${((f.lastFiredMs - runStartEpochMs) / 1000).toFixed(1)} s, outside fault windows`, refOf.get(f.entityId),
      await messageTrail(world, refOf.has(f.entityId) ? "DeskOrder" : "DeskLinkToken", f.entityId, `${f.dueMs}`, runStartEpochMs).catch((e) => [`(no trail: ${String(e)})`]))
  }
  const tokens = await world.query<{ token_hash: string; expires_ms: number }>(
    `SELECT token_hash, (extract(epoch FROM expires_at) * 1000)::float8 AS expires_ms FROM link_tokens WHERE service = 'desk'`)
  for (const p of linkExpiryProblems(tokens.map((t) => ({ id: t.token_hash, expiresMs: t.expires_ms })), expires, { checkMs, graceMs: LINK_EXPIRE_GRACE_MS })) {
    add("every link token's Expire fired once", `link token ${p.id.slice(0, 12)}…: ${p.problem}`)
  }
  const ticksOf = new Map<string, Array<Firing>>()
  for (const t of ticks) ticksOf.set(t.entityId, [...(ticksOf.get(t.entityId) ?? []), t])
  let quietest = 0
  for (const o of orders) {
    const open = o.status !== "released" && o.status !== "refunded" && o.status !== "failed"
    const gaps = tickChainGaps({ createdMs: o.created_ms, open }, ticksOf.get(o.id) ?? [], { checkMs, allowedMs: 0, windows, runStartMs: runStartEpochMs })
    const allowedMs = o.status === "expired" ? EXPIRED_TICK_CHAIN_QUIET_MS : TICK_CHAIN_QUIET_MS
    for (const g of gaps) {
      quietest = Math.max(quietest, g.quietMs)
      if (g.quietMs <= allowedMs) continue
      add("an order's Tick chain is never quiet beyond its tick outside faults", `order ${o.short_ref} (${o.status}): no tick from ${(g.fromMs / 1000).toFixed(1)} s to ${(g.toMs / 1000).toFixed(1)} s, ${g.quietMs} ms of it outside fault windows (${allowedMs} ms allowed)`, o.short_ref)
    }
  }
  const tickLate = latenessSplit(ticks, windows, runStartEpochMs)
  const expireLate = latenessSplit(expires, windows, runStartEpochMs)
  const redelivered = [...ticks, ...expires].filter((f) => f.deliveries > 1).length
  return {
    "desk order ticks fired / orders ticking / redelivered (all timers)": `${ticks.length} / ${ticksOf.size} / ${redelivered}`,
    "desk order tick lateness outside faults, ms (p50/p99/max)": distribution(tickLate.outside),
    "desk order tick lateness inside faults, ms (p50/p99/max)": distribution(tickLate.inside),
    "desk order tick chain: longest quiet stretch outside faults, ms": String(quietest),
    "link token expiries fired / tokens": `${expires.length} / ${tokens.length}`,
    "link token expiry lateness outside faults, ms (p50/p99/max)": distribution(expireLate.outside),
    "link token expiry lateness inside faults, ms (p50/p99/max)": distribution(expireLate.inside)
  }
}
