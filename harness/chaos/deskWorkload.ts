// The token desk's part of the chaos workload: customers with a desk key (cashout, stables, wrap),
// a ledger address of their own, an EVM account on both anvils and coins in the harness's
// litecoind wallet. Each mints SUSD from USDC on base, cashes it out and redeems it to USDC on
// base, wraps LTC and ETH and unwraps what it got back to fresh addresses, paying every deposit
// from its own wallets; and visitors sign in on every listener (wallet-challenge, -callback,
// -status, -exchange), link the wallet on the desk (the QR of a signed-in member) and read their
// rewards with the key the link returns. An order create whose outcome is unknown is sent again
// with the same Idempotency-Key. BTC is an in-process devnet per node (no shared chain): not wrapped.
import { Effect, Either, Redacted } from "effect"
import { ECPairFactory } from "ecpair"
import * as ecc from "tiny-secp256k1"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { p2pkhAddressOfPubkey } from "../../src/chain/address.ts"
import { makeViemLedger } from "../../src/chain/evm/viemLedger.ts"
import type { EvmLedger } from "../../src/chain/evm/EvmLedger.ts"
import { makeKeyWallet } from "../../src/chain/ledger/keyWallet.ts"
import { makeRpcLedger } from "../../src/chain/ledger/rpcLedger.ts"
import { ledgerParams, litecoinRegtestParams } from "../../src/chain/params.ts"
import { createMemberWithKey } from "../../src/desk/keys/DeskKeyStore.ts"
import * as DeskWallets from "../../src/desk/wallets/DeskWallets.ts"
import { deskIssuerWallet, systemWallet } from "../../src/platform/ledger/SystemWallet.ts"
import { anvilDevKey } from "../anvil.ts"
import { urlWithCredentials } from "../litecoind.ts"
import { omniChainIndex } from "../omniChainIndex.ts"
import { issueManaged, pollFor } from "../omniIssuer.ts"
import { deskPayload, makeWallet } from "../walletApp.ts"
import { randomLedgerKey } from "../walletServices.ts"
import { runWithDatabase } from "../withDatabase.ts"
import { unitsOf } from "./deskRules.ts"
import { call, type History, type Outcome } from "./history.ts"
import type { Rng } from "./rng.ts"
import { type Answered, REQUEST_DEADLINE_MS, untilAnswered as answeredOrDeadline } from "./untilAnswered.ts"
import type { World } from "./world.ts"

const v1 = "/api/public/v1"
/** A client gives one request this long across retries before it records it as never answered. */
/** The desk's tokens on the shared ledger: SUSD (dollar, backed by USDC on base), wLTC, wETH. */
export const DESK_TOKENS = ["SUSD", "wLTC", "wETH"] as const
/** Omni amounts have 8 decimals; USDC 6; ETH 18. */
const TOKEN_DECIMALS = 8
const ECPair = ECPairFactory(ecc)
/** How often a cash-out or redeem deposit is of another amount than ordered (the desk refunds it). */
const WRONG_AMOUNT_CHANCE = 0.15

export interface DeskCustomer {
  readonly name: string
  readonly apiKey: string
  readonly ledgerKey: { readonly privateKey: Uint8Array; readonly address: string }
  readonly evmKey: `0x${string}`
  /** What it holds of each desk token (base units), as its released mints and wraps told it. */
  readonly holds: Record<(typeof DESK_TOKENS)[number], bigint>
}

/** An order the workload created and paid: what the checker holds against the chains. */
export interface DeskOrder {
  readonly client: string
  readonly key: string
  readonly id: string
  readonly shortRef: string
  readonly kind: "cashout" | "mint" | "redeem" | "wrap" | "unwrap"
  readonly asset: string
  readonly payoutAddress: string
  /** The deposit's transaction, once the customer's wallet sent it. */
  depositTxid: string | undefined
  status: string
}

export interface DeskRun {
  readonly orders: Array<DeskOrder>
  readonly stats: { created: number; deposits: number; depositFailures: number; released: number; refused: number; neverAnswered: number; signIns: number; links: number; rewardsReads: number; signInRestarts: number }
  /** Why the first deposit the customer's wallet could not send failed (for the summary). */
  depositFailureSample?: string
  /** Requests retried for their whole deadline with no answer below 500. */
  readonly unanswered: Array<{ readonly op: string; readonly subject: string }>
}

export interface DeskWorld {
  readonly customers: ReadonlyArray<DeskCustomer>
  readonly properties: Readonly<Record<(typeof DESK_TOKENS)[number], number>>
  readonly issuerAddress: string
  readonly ltcHot: string
  readonly base: EvmLedger
  readonly ethereum: EvmLedger
  /** Mines a block on both anvils every `everyMs` (ETH deposits need depth; anvil mines only on a transaction). */
  readonly startEvmMiner: (everyMs: number) => () => Promise<void>
}

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * As an operator readies the desk on the shared chains: the desk issuer creates SUSD, wLTC and
 * wETH and the registry names them, live; the LTC hot vault gets coins for unwraps; each customer
 * gets a key, a coinbase on its ledger address (fees of its token sends) and an EVM account
 * (world.ts gave it USDC on base before the nodes started).
 */
export const setUpDesk = async (world: World, o: { readonly customers: number; readonly log: (s: string) => void }): Promise<DeskWorld> => {
  const ledgerUrl = urlWithCredentials(world.litecoind)
  const ledger = makeRpcLedger({ url: ledgerUrl, params: ledgerParams, nodeParams: litecoinRegtestParams })
  const burn = randomLedgerKey().address
  for (const code of DESK_TOKENS) {
    await pollFor(`the desk registry's ${code}`, 60_000, async () => ((await world.query(`SELECT 1 FROM desk_tokens WHERE code = $1`, [code])).length > 0 ? true : undefined), 500)
  }
  const issuer = await runWithDatabase(world.directUrl, systemWallet(deskIssuerWallet))
  const customers = Array.from({ length: Math.min(o.customers, world.evmCustomerKeys.length) }, (_, i) => ({ i, ledgerKey: randomLedgerKey() }))
  // The harness's own LTC (wrap deposits, the hot vault's float): a wallet in litecoind with a matured coinbase.
  await world.litecoind.rpc("createwallet", "chaos").catch(() => undefined)
  const ltcMiner = await world.litecoind.rpc<string>("getnewaddress", "", "legacy")
  await world.litecoind.rpc("generatetoaddress", 3, ltcMiner)
  await run(ledger.mine(1, issuer.address))
  for (const c of customers) await run(ledger.mine(1, c.ledgerKey.address))
  await run(ledger.mine(ledgerParams.coinbaseMaturity, burn))
  const chain = omniChainIndex()
  const issuerWallet = makeKeyWallet(ledger, issuer.privateKey)
  const properties = {} as Record<(typeof DESK_TOKENS)[number], number>
  for (const code of DESK_TOKENS) {
    properties[code] = await issueManaged(ledger, issuerWallet, chain, burn, code)
    await world.query(`UPDATE desk_tokens SET property_id = $1, live = true WHERE code = $2`, [properties[code], code])
  }
  // anvil is never reorged by the nemesis: a few blocks of depth are enough for ETH (LTC keeps its 6, above the reorgs' 3).
  await world.query(`UPDATE desk_tokens SET required_confirmations = 3 WHERE code = 'wETH'`)
  const ltcHot = await runWithDatabase(world.directUrl, Effect.map(DeskWallets.make, (w) => w.wallet("ltc", "hot").address))
  for (let i = 0; i < 4; i++) await world.litecoind.rpc("sendtoaddress", ltcHot, 2)
  await run(ledger.mine(1, burn))
  const out: Array<DeskCustomer> = []
  for (const c of customers) {
    const key = await runWithDatabase(world.directUrl, createMemberWithKey({ scopes: ["cashout", "stables", "wrap"] }))
    out.push({ name: `d${c.i}`, apiKey: key.apiKey, ledgerKey: c.ledgerKey, evmKey: world.evmCustomerKeys[c.i]!, holds: { SUSD: 0n, wLTC: 0n, wETH: 0n } })
  }
  const base = await run(makeViemLedger({ chain: "base", rpcUrl: world.anvil.url, hotWalletKey: Redacted.make(anvilDevKey), devRpc: "anvil" }))
  const ethereum = await run(makeViemLedger({ chain: "ethereum", rpcUrl: world.anvilEth.url, hotWalletKey: Redacted.make(anvilDevKey), devRpc: "anvil" }))
  o.log(`desk: ${out.length} customers; SUSD/wLTC/wETH are properties ${properties.SUSD}/${properties.wLTC}/${properties.wETH}; LTC hot vault ${ltcHot} funded with 8 LTC`)
  const startEvmMiner = (everyMs: number) => {
    let on = true
    const loop = (async () => {
      while (on) {
        await run(base.mine(1)).catch(() => undefined)
        await run(ethereum.mine(1)).catch(() => undefined)
        await sleep(everyMs)
      }
    })()
    return async () => { on = false; await loop }
  }
  return { customers: out, properties, issuerAddress: issuer.address, ltcHot, base, ethereum, startEvmMiner }
}

/** The desk's customers pause 300–1000 ms between two attempts. */
const customersPause = { minMs: 300, spreadMs: 700 }

/** One request through whichever node is alive, sent again (same key) until answered below 500 or its deadline; never answered, it is named in the run. */
const untilAnswered = async (world: World, history: History, rng: Rng, clock: () => number, deskRun: DeskRun,
  what: { client: string; op: string; subject: string; params: Record<string, string>; send: (deskUrl: string) => Promise<Outcome> }): Promise<Answered | undefined> => {
  const out = await answeredOrDeadline(world, history, rng, clock, { ...what, send: (node) => what.send(node.deskUrl) }, customersPause)
  if (out === undefined) deskRun.unanswered.push({ op: what.op, subject: what.subject })
  return out
}

const post = (apiKey: string, idempotencyKey: string, body: unknown): RequestInit =>
  ({ method: "POST", headers: { "x-api-key": apiKey, "content-type": "application/json", "idempotency-key": idempotencyKey }, body: JSON.stringify(body) })

/** A fresh LTC regtest address nobody spends from (an unwrap's payout lands there alone). */
const freshLtcAddress = (): string => Either.getOrThrow(p2pkhAddressOfPubkey(ECPair.makeRandom().publicKey, litecoinRegtestParams))

export const runDeskCustomer = async (world: World, desk: DeskWorld, c: DeskCustomer, deskRun: DeskRun, history: History, rng: Rng, clock: () => number, stopAtMs: number) => {
  const ledger = makeRpcLedger({ url: urlWithCredentials(world.litecoind), params: ledgerParams, nodeParams: litecoinRegtestParams })
  const tokenWallet = makeKeyWallet(ledger, c.ledgerKey.privateKey)
  // The same key and coins seen as LTC (litecoind's own address format) for LTC wrap deposits.
  const ltcWallet = makeKeyWallet(makeRpcLedger({ url: urlWithCredentials(world.litecoind), params: litecoinRegtestParams, nodeParams: litecoinRegtestParams }), c.ledgerKey.privateKey)
  const onBase = await run(makeViemLedger({ chain: "base", rpcUrl: world.anvil.url, hotWalletKey: Redacted.make(c.evmKey), devRpc: "anvil" }))
  const onEthereum = await run(makeViemLedger({ chain: "ethereum", rpcUrl: world.anvilEth.url, hotWalletKey: Redacted.make(c.evmKey), devRpc: "anvil" }))
  const myEvm = privateKeyToAccount(c.evmKey).address
  const mine: Array<DeskOrder> = []
  /** Released grants not yet seen in a block. */
  const credits: Array<{ readonly token: (typeof DESK_TOKENS)[number]; readonly amount: bigint; readonly txid: string }> = []
  const settleCredits = async () => {
    for (const cr of [...credits]) {
      const tx = await world.litecoind.rpc<{ confirmations?: number }>("getrawtransaction", cr.txid, true).catch(() => undefined)
      if ((tx?.confirmations ?? 0) >= 1) {
        c.holds[cr.token] += cr.amount
        credits.splice(credits.indexOf(cr), 1)
      }
    }
  }

  /** The customer's wallet pays the deposit; a token send may wait for its change to confirm (a block a second), up to ~25 s. */
  const payDeposit = async (o: DeskOrder, depositAddress: string, amount: string) => {
    let outcome: Outcome = { kind: "unknown", detail: "not sent" }
    for (let attempt = 1; attempt <= 20; attempt++) {
      try {
        const txid = o.kind === "mint" ? await run(onBase.erc20Transfer(world.usdc, depositAddress, unitsOf(amount, 6)))
          // From the customer's own key and coins, as a wallet outside the node would. litecoind's
          // own wallet (`sendtoaddress`) does not survive the nemesis's reorgs: sending small
          // amounts with a block every two sends and a 1-3 block `invalidateblock` every 37 sends,
          // its balance went 140.9 → 48.0 → 0 LTC by the third reorg. Then every LTC deposit of
          // the run failed "Insufficient funds" and its orders stayed open, ticking, to their
          // expiry (chaos seed 7's 30-minute runs on bedf40e and 9d5ee78: 76 sends failed, 79
          // orders awaiting a deposit, the desk's ticks minutes late).
          : o.kind === "wrap" && o.asset === "LTC" ? await run(ltcWallet.pay(depositAddress, unitsOf(amount, 8)))
          : o.kind === "wrap" ? await run(onEthereum.nativeTransfer(depositAddress, unitsOf(amount, 18)))
          : await run(tokenWallet.omni({ type: "simpleSend", property: desk.properties[(o.kind === "unwrap" ? `w${o.asset}` : o.asset) as (typeof DESK_TOKENS)[number]], amount: unitsOf(amount, TOKEN_DECIMALS) }, depositAddress))
        outcome = { kind: "answer", status: 200, body: { txid } }
        o.depositTxid = txid
        break
      } catch (e) {
        outcome = { kind: "unknown", detail: String(e).slice(0, 300) }
        await sleep(1_200)
      }
    }
    history.add({ atMs: clock(), client: c.name, op: `deposit ${o.kind}`, node: "-", subject: o.shortRef, params: { to: depositAddress, amount }, outcome })
    if (o.depositTxid === undefined) {
      deskRun.stats.depositFailures++
      if (outcome.kind === "unknown") deskRun.depositFailureSample ??= `${o.kind} ${o.asset} ${o.shortRef}: ${outcome.detail}`
    }
    else deskRun.stats.deposits++
  }

  const create = async (i: number, kind: DeskOrder["kind"], asset: string, path: string, body: Record<string, unknown>, payoutAddress: string, depositAmount: string) => {
    const key = `${c.name}-o${i}`
    const out = await untilAnswered(world, history, rng, clock, deskRun, {
      client: c.name, op: `${kind} ${asset}`, subject: key, params: { key, ...Object.fromEntries(Object.entries(body).map(([k, v]) => [k, String(v)])) },
      send: (deskUrl) => call(`${deskUrl}${v1}${path}`, post(c.apiKey, key, body))
    })
    if (out === undefined) { deskRun.stats.neverAnswered++; return }
    if (out.status !== 201 && out.status !== 200) { deskRun.stats.refused++; return }
    const b = out.body as { id: string; shortRef: string; depositAddress: string; status: string }
    deskRun.stats.created++
    // The history's subject for what follows is the order's reference (polls, the deposit).
    history.add({ atMs: clock(), client: c.name, op: "created", node: "-", subject: b.shortRef, params: { key }, outcome: out })
    const o: DeskOrder = { client: c.name, key, id: b.id, shortRef: b.shortRef, kind, asset, payoutAddress, depositTxid: undefined, status: b.status }
    deskRun.orders.push(o)
    mine.push(o)
    await payDeposit(o, b.depositAddress, depositAmount)
  }

  /** Polls one open order (a poll also advances it); a released mint or wrap adds to what the customer holds. */
  const pollOne = async () => {
    const open = mine.filter((o) => o.depositTxid !== undefined && !["released", "refunded", "expired", "failed"].includes(o.status))
    if (open.length === 0) return
    const o = rng.pick(open)
    const path = o.kind === "wrap" || o.kind === "unwrap" ? `/wrap/orders/${o.id}` : `/cashout/orders/${o.id}`
    const out = await untilAnswered(world, history, rng, clock, deskRun, {
      client: c.name, op: "poll", subject: o.shortRef, params: { id: o.id },
      send: (deskUrl) => call(`${deskUrl}${v1}${path}`, { headers: { "x-api-key": c.apiKey } })
    })
    if (out?.status !== 200) return
    const b = out.body as { status: string; payoutAmount: string; mintTxid: string | null }
    if (b.status === "released" && o.status !== "released") {
      deskRun.stats.released++
      // Spendable once the grant is in a block: an Omni send ahead of its funding grant is invalid.
      if ((o.kind === "mint" || o.kind === "wrap") && b.mintTxid !== null) {
        credits.push({ token: o.kind === "mint" ? "SUSD" : o.asset === "LTC" ? "wLTC" : "wETH", amount: unitsOf(b.payoutAmount, TOKEN_DECIMALS), txid: b.mintTxid })
      }
    }
    o.status = b.status
  }

  const show = (n: bigint) => `${n / 10n ** 8n}.${String(n % 10n ** 8n).padStart(8, "0")}`
  for (let i = 0; clock() < stopAtMs; i++) {
    await settleCredits()
    const roll = rng.next()
    if (roll < 0.3) await pollOne()
    else if (roll < 0.45) {
      const amount = rng.int(20, 60)
      await create(i, "mint", "SUSD", "/stables/orders", { asset: "SUSD", direction: "mint", chain: "base", token: "USDC", recipient: c.ledgerKey.address, amount }, c.ledgerKey.address, String(amount))
    } else if (roll < 0.55 && c.holds.SUSD >= 11n * 10n ** 8n) {
      const amount = rng.int(10, Math.min(20, Number(c.holds.SUSD / 10n ** 8n) - 1))
      // Now and then a deposit of another amount: the desk must refund it, whole, once.
      const sent = rng.chance(WRONG_AMOUNT_CHANCE) ? amount + 1 : amount
      c.holds.SUSD -= BigInt(sent) * 10n ** 8n
      await create(i, "cashout", "SUSD", "/cashout/orders", { amount, chain: "base", payoutAddress: privateKeyToAccount(generatePrivateKey()).address, refundAddress: c.ledgerKey.address }, "", String(sent))
    } else if (roll < 0.62 && c.holds.SUSD >= 11n * 10n ** 8n) {
      const amount = 10
      const sent = rng.chance(WRONG_AMOUNT_CHANCE) ? amount + 1 : amount
      c.holds.SUSD -= BigInt(sent) * 10n ** 8n
      await create(i, "redeem", "SUSD", "/stables/orders", { asset: "SUSD", direction: "redeem", chain: "base", payoutAddress: privateKeyToAccount(generatePrivateKey()).address, refundAddress: c.ledgerKey.address, amount }, "", String(sent))
    } else if (roll < 0.74) {
      const amount = `0.0${rng.int(1, 5)}`
      await create(i, "wrap", "LTC", "/wrap/orders", { direction: "wrap", asset: "LTC", amount, payoutAddress: c.ledgerKey.address }, c.ledgerKey.address, amount)
    } else if (roll < 0.82 && c.holds.wLTC >= 1_000_000n) {
      const amount = c.holds.wLTC
      c.holds.wLTC = 0n
      await create(i, "unwrap", "LTC", "/wrap/orders", { direction: "unwrap", asset: "LTC", amount: show(amount), payoutAddress: freshLtcAddress(), refundAddress: c.ledgerKey.address }, "", show(amount))
    } else if (roll < 0.92) {
      const amount = `0.00${rng.int(1, 9)}`
      await create(i, "wrap", "ETH", "/wrap/orders", { direction: "wrap", asset: "ETH", amount, payoutAddress: c.ledgerKey.address, refundAddress: myEvm }, c.ledgerKey.address, amount)
    } else if (c.holds.wETH >= 100_000n) {
      const amount = c.holds.wETH
      c.holds.wETH = 0n
      await create(i, "unwrap", "ETH", "/wrap/orders", { direction: "unwrap", asset: "ETH", amount: show(amount), payoutAddress: privateKeyToAccount(generatePrivateKey()).address, refundAddress: c.ledgerKey.address }, "", show(amount))
    } else await pollOne()
    await sleep(rng.int(300, 1_200))
  }
}

/** The one-time browser cookie a challenge sets (`<prefix>_signin`), whatever the listener's prefix. */
const signinCookie = (headers: Headers): string | undefined => {
  for (const line of headers.getSetCookie()) {
    const m = /^([a-z_]+_signin)=([^;]*)/.exec(line)
    if (m !== null) return `${m[1]}=${m[2]}`
  }
  return undefined
}

/**
 * A visitor: a fresh wallet (seeded) signs in on a listener picked from the seed; on the desk it
 * then links the wallet through the member's QR and reads its rewards with the key the link
 * returns. A step that is not answered below 500 restarts the flow from a new challenge (each
 * challenge is single use); the flow has REQUEST_DEADLINE_MS in all.
 */
export const runVisitor = async (world: World, name: string, deskRun: DeskRun, history: History, rng: Rng, clock: () => number, stopAtMs: number) => {
  for (let i = 0; clock() < stopAtMs; i++) {
    const seed = Uint8Array.from({ length: 32 }, () => rng.int(0, 255))
    const wallet = makeWallet(seed)
    const service = rng.pick(["exchange", "desk", "social"] as const)
    const subject = `${name} sign-in ${i}`
    const deadline = Date.now() + REQUEST_DEADLINE_MS
    let done = false
    while (!done && Date.now() < deadline) {
      const live = world.live()
      if (live.length === 0) { await sleep(1_000); continue }
      const node = rng.pick(live)
      const base = service === "exchange" ? node.baseUrl : service === "desk" ? node.deskUrl : node.socialUrl
      // A link URL names the desk's public URL (one for every node, world.ts); the request goes to this node, as a load balancer would send it.
      const viaNode = (url: string) => { const u = new URL(url); return `${base}${u.pathname}${u.search}` }
      const auth = (p: string) => `${base}/api/public/auth/${p}`
      const step = async (op: string, url: string, init: RequestInit = {}) => {
        const outcome = await call(url, init)
        history.add({ atMs: clock(), client: name, op: `${service} ${op}`, node: node.name, subject, params: {}, outcome })
        return outcome.kind === "answer" && outcome.status < 500 ? outcome : undefined
      }
      // The browser's challenge (its cookie kept), the wallet's signature, the browser's poll, the exchange.
      const minted = await fetch(auth("wallet-challenge"), { method: "POST", signal: AbortSignal.timeout(15_000) }).then(async (r) => ({ r, body: await r.json().catch(() => undefined) as { id?: string } | undefined }), (e: unknown) => ({ r: undefined, body: undefined, e }))
      history.add({ atMs: clock(), client: name, op: `${service} wallet-challenge`, node: node.name, subject, params: {}, outcome: minted.r === undefined ? { kind: "unknown", detail: String((minted as { e?: unknown }).e) } : { kind: "answer", status: minted.r.status, body: minted.body } })
      const cookie = minted.r === undefined ? undefined : signinCookie(minted.r.headers)
      if (minted.r?.status !== 200 || minted.body?.id === undefined || cookie === undefined) { deskRun.stats.signInRestarts++; await sleep(1_000); continue }
      const id = minted.body.id
      const msg = await step("wallet-callback GET", auth(`wallet-callback?id=${id}`))
      if (msg?.status !== 200) { deskRun.stats.signInRestarts++; await sleep(1_000); continue }
      const message = (msg.body as { message: string }).message
      const signed = await step("wallet-callback", auth("wallet-callback"), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id, address: wallet.addresses.p2pkh, signature: wallet.sign(message) }) })
      if (signed?.status !== 200) { deskRun.stats.signInRestarts++; await sleep(1_000); continue }
      const status = await step("wallet-status", auth(`wallet-status?id=${id}`), { headers: { cookie } })
      const token = (status?.body as { token?: string } | undefined)?.token
      if (token === undefined) { deskRun.stats.signInRestarts++; await sleep(1_000); continue }
      const exchanged = await step("wallet-exchange", auth("wallet-exchange"), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token }) })
      const session = (exchanged?.body as { token?: string } | undefined)?.token
      if (exchanged?.status !== 200 || session === undefined) { deskRun.stats.signInRestarts++; await sleep(1_000); continue }
      deskRun.stats.signIns++
      if (service === "desk") {
        // The member's QR, the wallet reads its manifest and posts the signed payload: a key with rewards.
        const qr = await step("app wallet-link", `${base}/api/app/wallet-link`, { method: "POST", headers: { authorization: `Bearer ${session}`, "content-type": "application/json" }, body: "{}" })
        const url = (qr?.body as { url?: string } | undefined)?.url
        if (qr?.status !== 201 || url === undefined) { deskRun.stats.signInRestarts++; await sleep(1_000); continue }
        const manifest = await step("wallet-link GET", viaNode(url), { headers: { accept: "application/json" } })
        if (manifest?.status !== 200) { deskRun.stats.signInRestarts++; await sleep(1_000); continue }
        const payload = deskPayload(manifest.body as Record<string, unknown>, wallet, privateKeyToAccount(generatePrivateKey()).address)
        const linked = await step("wallet-link", viaNode(url), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ payload, signature: wallet.signJson(payload), address: wallet.addresses.p2pkh }) })
        const apiKey = (linked?.body as { api_key?: string } | undefined)?.api_key
        if (linked?.status !== 200 || apiKey === undefined) { deskRun.stats.signInRestarts++; await sleep(1_000); continue }
        deskRun.stats.links++
        const rewards = await step("rewards balance", `${base}${v1}/rewards/balance?address=${wallet.addresses.p2pkh}&days=30`, { headers: { "x-api-key": apiKey } })
        if (rewards?.status === 200) deskRun.stats.rewardsReads++
      }
      done = true
    }
    if (!done) deskRun.unanswered.push({ op: `${service} sign-in`, subject })
    await sleep(rng.int(1_000, 3_000))
  }
}
