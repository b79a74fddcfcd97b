// The exchange's part of the chaos workload: traders under authorizations, some of which expire
// mid-run, placing resting orders, cancelling them and crossing each other, through whichever
// nodes are alive. A request whose outcome is unknown (a cut connection, a 5xx) is sent again
// with the same newClientOrderId, as a real client does, until it is answered or its deadline.
import { Effect, type Layer, ManagedRuntime } from "effect"
import { Authorization, Grant } from "../../schemas/exchange/authorization.ts"
import { newGrantId } from "../../src/exchange/authorization/AuthorizationEntity.ts"
import { entityIdOf } from "../../src/exchange/authorization/policy.ts"
import { clusterClientLayer } from "../clusterClient.ts"
import { createKey } from "../keys.ts"
import { urlWithCredentials } from "../litecoind.ts"
import { pollFor, readyOmniIssuer } from "../omniIssuer.ts"
import { signedQuery, type Key } from "../signed.ts"
import { randomLedgerKey } from "../walletServices.ts"
import { call, type History } from "./history.ts"
import type { Rng } from "./rng.ts"
import { untilAnswered } from "./untilAnswered.ts"
import type { World } from "./world.ts"

export const SYMBOL = "CHAOSACHAOSB"
const prefix = "/api/public/v1"
/** Whole units each trader is granted and funded with. */
export const FUNDS_WHOLE = 100_000n
/** A client gives one request this long across retries before it records it as never answered. */

export interface Trader extends Key {
  readonly name: string
  readonly userId: number
  readonly address: string
  readonly side: "BUY" | "SELL"
  readonly asset: "CHAOSA" | "CHAOSB"
  readonly delegated: string
  readonly grantId: string
  readonly expiresAtMs: number
}

export interface ExchangeWorld {
  readonly tokA: number
  readonly tokB: number
  readonly traders: ReadonlyArray<Trader>
  readonly chain: Awaited<ReturnType<typeof readyOmniIssuer>>
  /** Mines a block every `everyMs` until stopped (settlement and sweeps need blocks on any node). */
  readonly startMiner: (everyMs: number) => () => Promise<void>
  readonly dispose: () => Promise<void>
}

export const setUpExchange = async (world: World, rng: Rng, o: { readonly traders: number; readonly runStartMs: number; readonly durationMs: number; readonly log: (s: string) => void }): Promise<ExchangeWorld> => {
  const chain = await readyOmniIssuer(urlWithCredentials(world.litecoind), world, 3)
  const { ledger, run, burn, issuerWallet, issue } = chain
  const [tokA, tokB] = [await issue("Chaos A"), await issue("Chaos B")]
  // The operator lists the market (as `markets add --property` does on a real ledger).
  await world.query(`INSERT INTO exchange_assets (code, property_id, decimals) VALUES ('CHAOSA', $1, 8), ('CHAOSB', $2, 8)`, [tokA, tokB])
  await world.query(`INSERT INTO markets (id, symbol, base, quote, tick_size, step_size, min_price, max_price, min_qty, max_qty, min_notional, max_notional)
    VALUES ((SELECT coalesce(max(id), 0) + 1 FROM markets), $1, 'CHAOSA', 'CHAOSB', '0.01', '0.01', '0.01', '1000000', '0.01', '9000000', '0', '0')`, [SYMBOL])
  await world.query(`SELECT pg_notify('shardline_markets', $1)`, [SYMBOL])
  const client = ManagedRuntime.make(clusterClientLayer(world.directUrl, "shardline:chaos-client") as Layer.Layer<any>)
  const traders: Array<Trader> = []
  for (let i = 0; i < o.traders; i++) {
    const side = i % 2 === 0 ? "SELL" : "BUY"
    const asset = side === "SELL" ? "CHAOSA" : "CHAOSB"
    const address = randomLedgerKey().address
    const key = await createKey(world.directUrl, { scopes: ["read", "trade"], addresses: [address] })
    // Half the grants end inside the run (at 35–65% of it), so expiry, its sweep and the key's
    // destruction happen under the same faults as the trading. A setup slower than the estimate (a
    // loaded machine, where a grant may wait a minute for its entity) gives an expiry at least 2
    // minutes after the grant is sent; one refused as already past is sent again, later.
    const drawn = o.runStartMs + Math.floor(o.durationMs * (0.35 + rng.next() * 0.3))
    const expiring = i % 4 < 2
    let grantId = ""
    let expiresAtMs = 0
    for (let attempt = 1; ; attempt++) {
      grantId = newGrantId()
      expiresAtMs = expiring ? Math.max(drawn, Date.now() + 120_000) : Date.now() + 6 * 3_600_000
      // The reply is awaited (through cluster storage): a refused grant stops the setup with its reason.
      const refused = await client.runPromise(Effect.timeout(Effect.flatMap(Authorization.client, (a: any) =>
        a(entityIdOf(key.userId, asset)).Grant(new Grant({ grantId, cap: String(FUNDS_WHOLE), expiresAtMs }))) as Effect.Effect<unknown, unknown>, "10 minutes"))
        .then(() => undefined, (e: unknown) => e)
      if (refused === undefined) break
      if (attempt >= 3 || !String((refused as { message?: string })?.message ?? refused).includes("expiry is in the past")) throw refused
      o.log(`setup: trader ${i}'s grant reached its entity after its expiry (a slow machine); granting again`)
    }
    const grant = await pollFor(`trader ${i}'s grant`, 600_000, async () =>
      (await world.query<{ delegated_address: string }>(`SELECT delegated_address FROM authorizations WHERE grant_id = $1`, [grantId]))[0])
    await run(issuerWallet.omni({ type: "grant", property: side === "SELL" ? tokA : tokB, amount: FUNDS_WHOLE * 10n ** 8n, memo: "" }, grant.delegated_address))
    await run(ledger.mine(1, burn))
    traders.push({ ...key, name: `t${i}`, address, side, asset, delegated: grant.delegated_address, grantId, expiresAtMs })
  }
  // Funded as every node sees it before the run starts (each node's Omni view is its own).
  for (const t of traders) {
    for (const n of world.live()) {
      await pollFor(`${t.asset} funded on ${n.name} for ${t.name}`, 90_000, async () => {
        const out = await call(`${n.baseUrl}${prefix}/account?${signedQuery(t, {})}`, { headers: { "X-MBX-APIKEY": t.apiKey } })
        const b = out.kind === "answer" ? (out.body as any)?.balances?.find((x: any) => x.asset === t.asset) : undefined
        return b?.free === `${FUNDS_WHOLE}.00000000` ? true : undefined
      }, 500)
    }
  }
  o.log(`exchange: ${traders.length} traders on ${SYMBOL} (properties ${tokA}/${tokB}); ${traders.filter((t) => t.expiresAtMs < o.runStartMs + o.durationMs).length} grants expire mid-run`)
  const startMiner = (everyMs: number) => {
    let on = true
    const loop = (async () => {
      while (on) {
        await run(ledger.mine(1, burn)).catch(() => undefined)
        await new Promise((r) => setTimeout(r, everyMs))
      }
    })()
    return async () => { on = false; await loop }
  }
  return { tokA, tokB, traders, chain, startMiner, dispose: () => client.dispose() }
}

/** The exchange's traders pause 250–750 ms between two attempts. */
const tradersPause = { minMs: 250, spreadMs: 500 }

export interface TraderStats { placed: number; cancelled: number; refused: number; neverAnswered: number }

export const runTrader = async (world: World, t: Trader, history: History, rng: Rng, clock: () => number, stopAtMs: number, stats: TraderStats) => {
  const resting: Array<string> = []
  for (let i = 0; clock() < stopAtMs; i++) {
    if (resting.length > 0 && rng.chance(0.3)) {
      const id = resting.splice(rng.int(0, resting.length - 1), 1)[0]!
      const params = { symbol: SYMBOL, origClientOrderId: id }
      const out = await untilAnswered(world, history, rng, clock, {
        client: t.name, op: "cancel", subject: `${t.userId}/${id}`, params,
        send: (node) => call(`${node.baseUrl}${prefix}/order?${signedQuery(t, params)}`, { method: "DELETE", headers: { "X-MBX-APIKEY": t.apiKey } })
      }, tradersPause)
      if (out === undefined) stats.neverAnswered++
      else if (out.status === 200) stats.cancelled++
    } else {
      const clientOrderId = `${t.name}-${i}`
      const crossing = rng.chance(0.3)
      const cents = crossing ? 100 : t.side === "SELL" ? rng.int(105, 150) : rng.int(50, 95)
      const params = { symbol: SYMBOL, side: t.side, type: "LIMIT", timeInForce: "GTC", price: (cents / 100).toFixed(2), quantity: String(rng.int(1, 3)), newClientOrderId: clientOrderId, newOrderRespType: "FULL" }
      const out = await untilAnswered(world, history, rng, clock, {
        client: t.name, op: "order", subject: `${t.userId}/${clientOrderId}`, params,
        send: (node) => call(`${node.baseUrl}${prefix}/order?${signedQuery(t, params)}`, { method: "POST", headers: { "X-MBX-APIKEY": t.apiKey } })
      }, tradersPause)
      if (out === undefined) stats.neverAnswered++
      else if (out.status === 200) {
        stats.placed++
        if ((out.body as any)?.status === "NEW" || (out.body as any)?.status === "PARTIALLY_FILLED") resting.push(clientOrderId)
      } else stats.refused++
    }
    await new Promise((r) => setTimeout(r, rng.int(20, 200)))
  }
}

export interface BookSample { readonly atMs: number; readonly node: string; readonly bestBid?: string; readonly bestAsk?: string }

/** Reads the public book every `everyMs` from some live node: the checker asserts it never crossed. */
export const sampleBook = async (world: World, rng: Rng, clock: () => number, stopAtMs: number, everyMs: number, out: Array<BookSample>) => {
  while (clock() < stopAtMs) {
    const live = world.live()
    if (live.length > 0) {
      const n = rng.pick(live)
      const r = await call(`${n.baseUrl}${prefix}/depth?symbol=${SYMBOL}&limit=5`, {}, 5_000)
      if (r.kind === "answer" && r.status === 200) {
        const d = r.body as { bids: Array<[string, string]>; asks: Array<[string, string]> }
        out.push({ atMs: clock(), node: n.name, ...(d.bids[0] ? { bestBid: d.bids[0][0] } : {}), ...(d.asks[0] ? { bestAsk: d.asks[0][0] } : {}) })
      }
    }
    await new Promise((r) => setTimeout(r, everyMs))
  }
}
