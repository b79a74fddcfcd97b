// The token desk web app (issue 24): sign-in, then the member's account page: the linked wallet and
// the wallet-link QR with its live state (waiting, linked, expired), the linked wallet's rewards
// (current balance, the 30-day average, a chart of the hourly samples), partner keys (scopes,
// callback URL, the fee they pay; the key and its signing secret shown once; revoke), the saved
// payout address, and the member's orders with their status history and every txid. Built only on
// the desk's session routes (/api/app/…, in its OpenAPI). Plain JavaScript.
import { api, el, field, linkQr, notice, requireSession, run, section, sessionsSection, shell, signInPage } from "../../platform/webapp/client/common.js"

const title = "Token desk"
const scopes = [
  ["cashout", "cash-out"], ["rewards", "rewards"], ["stables", "dollar tokens"], ["wrap", "wrapping"]
]
/** Orders refresh this often; rewards at the sampling rate, at most once a minute (the spec's fair use). */
const ORDERS_POLL_MS = 5000
const SVG = "http://www.w3.org/2000/svg"

const svg = (tag, attrs = {}, ...children) => {
  const node = document.createElementNS(SVG, tag)
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v))
  for (const c of children) node.append(c)
  return node
}

/** "12.5" → 1250000000n (the desk's tokens have 8 decimals): the chart scales exact amounts. */
const baseUnits = (decimal) => {
  const [whole, frac = ""] = decimal.split(".")
  return BigInt(whole) * 100000000n + BigInt((frac + "00000000").slice(0, 8))
}
const pct = (bps) => `${(bps / 100).toFixed(2).replace(/\.?0+$/, "")}%`
const when = (iso) => new Date(iso).toLocaleString()

/** The hourly samples as a line (a missed slot breaks it), with its range in words for screen readers. */
const rewardsChart = (samples) => {
  const W = 640, H = 200, pad = 4
  const taken = samples.filter((s) => s.balance !== null)
  const box = el("figure", { class: "chart", "data-points": String(taken.length) })
  if (taken.length === 0) {
    box.append(el("p", { class: "muted" }, "No samples yet: the first is taken at the next sampling slot."))
    return box
  }
  const max = taken.reduce((m, s) => (baseUnits(s.balance) > m ? baseUnits(s.balance) : m), 0n)
  const t0 = Date.parse(samples[0].at), t1 = Date.parse(samples[samples.length - 1].at)
  const x = (at) => (t1 === t0 ? W / 2 : pad + ((Date.parse(at) - t0) / (t1 - t0)) * (W - 2 * pad))
  const y = (balance) => (max === 0n ? H - pad : H - pad - Number((baseUnits(balance) * BigInt(H - 2 * pad)) / max))
  const lines = []
  let run = []
  for (const s of samples) {
    if (s.balance === null) {
      if (run.length > 0) lines.push(run)
      run = []
    } else run.push(`${x(s.at).toFixed(1)},${y(s.balance)}`)
  }
  if (run.length > 0) lines.push(run)
  const highest = taken.find((s) => baseUnits(s.balance) === max).balance
  const summary = `${taken.length} samples from ${when(samples[0].at)} to ${when(samples[samples.length - 1].at)}; highest ${highest}.`
  box.append(
    svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `Balance chart: ${summary}` },
      svg("line", { x1: 0, y1: H - pad, x2: W, y2: H - pad, stroke: "#dfe3e8" }),
      ...lines.map((points) => points.length === 1
        ? svg("circle", { cx: points[0].split(",")[0], cy: points[0].split(",")[1], r: 3, fill: "#1f5fbf" })
        : svg("polyline", { points: points.join(" "), fill: "none", stroke: "#1f5fbf", "stroke-width": 2, "stroke-linejoin": "round" }))),
    el("figcaption", { class: "muted" }, summary))
  return box
}

const rewardsSection = () => {
  const body = el("div", { "aria-live": "polite" })
  const status = notice()
  let timer
  const load = async () => {
    clearTimeout(timer)
    let r
    try {
      r = await api("/api/app/rewards?days=30")
    } catch (e) {
      if (e.status === 404) body.replaceChildren(el("p", { class: "muted" }, "Link your wallet to see its rewards."))
      else status.error(e)
      timer = setTimeout(load, 60_000)
      return
    }
    status.clear()
    body.replaceChildren(
      el("dl", { class: "kv" },
        el("dt", {}, "Current balance"), el("dd", { "data-field": "currentBalance" }, r.currentBalance),
        el("dt", {}, `${r.days}-day average`), el("dd", { "data-field": "averageDailyBalance" }, r.averageDailyBalance),
        el("dt", {}, "Samples"), el("dd", {}, `${r.sampleCount} taken, ${r.missingCount} missed${r.lastSampleAt ? `, last ${when(r.lastSampleAt)}` : ""}`),
        ...r.tokens.flatMap((t) => [el("dt", {}, t.asset ?? `Property ${t.propertyId}`), el("dd", {}, `${t.currentBalance} now, ${t.averageDailyBalance} on average`)])),
      rewardsChart(r.samples))
    timer = setTimeout(load, Math.max(2000, Math.min(60_000, r.intervalMs)))
  }
  load()
  return Object.assign(section("Rewards", el("p", { class: "muted" }, "The linked wallet's dollar tokens on every derived address, sampled each hour."), body, status), { reload: load })
}

const walletSection = (account, onLinked) => {
  const linked = el("div")
  const replace = el("input", { type: "checkbox", name: "replace" })
  const showWallet = (w) => linked.replaceChildren(w
    ? el("dl", { class: "kv", "data-linked": w.signingAddress },
      el("dt", {}, "Signing address"), el("dd", { class: "mono" }, w.signingAddress),
      el("dt", {}, "USDC payout (EVM)"), el("dd", { class: "mono" }, w.evmAddress),
      el("dt", {}, "Base payout"), el("dd", { class: "mono" }, w.baseAddress),
      el("dt", {}, "Wallet"), el("dd", {}, `${w.wallet}, linked ${when(w.linkedAt)}`))
    : el("p", { class: "muted" }, "No wallet is linked yet. Linking shares your wallet's extended public key (watch-only: it cannot move funds) and fills your payout addresses."))
  showWallet(account.wallet)
  const qr = linkQr({
    create: () => api("/api/app/wallet-link", { method: "POST", body: { replace: replace.checked } }),
    stateOf: (id) => api(`/api/app/wallet-link/${encodeURIComponent(id)}`),
    linkedText: "Linked. Your wallet's earlier partner keys were replaced by the one it received.",
    onLinked: (s) => {
      showWallet(s.wallet)
      onLinked()
    }
  })
  return section("Wallet", linked,
    el("form", { onsubmit: (e) => { e.preventDefault(); qr.start() } },
      account.wallet ? el("label", {}, replace, " Replace the linked wallet with another one") : null,
      el("p", {}, el("button", { type: "submit" }, account.wallet ? "Link again" : "Link a wallet"))),
    qr.area, qr.status)
}

const keysSection = () => {
  const list = el("ul", { class: "rows", "aria-label": "Partner keys" })
  const status = notice()
  const shown = el("div")
  const load = async () => {
    const { keys } = await api("/api/app/keys")
    list.replaceChildren(...(keys.length === 0 ? [el("li", {}, "No partner keys yet.")] : keys.map((k) => el("li", { "data-key": k.id },
      el("div", {},
        el("div", {}, k.scopes.join(" + ")),
        el("div", { class: "muted" }, `${k.callbackUrl ? `callbacks to ${k.callbackUrl}` : "no callback URL"} · fee ${pct(k.feeBps)} · created ${when(k.createdAt)}`),
        el("div", { class: "muted mono" }, `id ${k.id}`)),
      el("button", { type: "button", class: "danger", "aria-label": `Revoke key ${k.id}`, onclick: async () => {
        try {
          await api(`/api/app/keys/${encodeURIComponent(k.id)}`, { method: "DELETE" })
          status.info("The key was revoked on every node.")
          await load()
        } catch (e) {
          status.error(e)
        }
      } }, "Revoke")))))
  }
  const boxes = scopes.map(([name, label]) => [name, el("input", { type: "checkbox", name, checked: name === "cashout" })])
  const callback = el("input", { type: "url", name: "callbackUrl", placeholder: "https://partner.example/desk-events", autocomplete: "off" })
  const form = el("form", { onsubmit: async (e) => {
    e.preventDefault()
    const chosen = boxes.filter(([, box]) => box.checked).map(([name]) => name)
    if (chosen.length === 0) return status.error("Choose at least one scope.")
    try {
      const created = await api("/api/app/keys", { method: "POST", body: { scopes: chosen, callbackUrl: callback.value.trim() || undefined } })
      shown.replaceChildren(el("div", { class: "secret", role: "alert", id: "new-key" },
        el("p", {}, el("strong", {}, "Copy the key and its signing secret now: they are never shown again.")),
        el("dl", { class: "kv" },
          el("dt", {}, "API key"), el("dd", { class: "mono", "data-field": "apiKey" }, created.apiKey),
          el("dt", {}, "Signing secret"), el("dd", { class: "mono", "data-field": "signingSecret" }, created.signingSecret),
          el("dt", {}, "Fee"), el("dd", {}, pct(created.feeBps)))))
      status.clear()
      form.reset()
      await load()
    } catch (err) {
      status.error(err)
    }
  } },
  el("fieldset", {}, el("legend", {}, "Scopes"), ...boxes.map(([name, box]) => el("label", { class: "check" }, box, ` ${scopes.find((s) => s[0] === name)[1]}`))),
  field("Callback URL", callback, "Optional: order milestones are POSTed here, signed with the key's signing secret"),
  el("button", { type: "submit" }, "Create key"), status)
  load().catch((e) => status.error(e))
  return Object.assign(section("Partner keys", form, shown, list), { reload: () => load().catch((e) => status.error(e)) })
}

const payoutSection = (account) => {
  const status = notice()
  const view = el("dl", { class: "kv" })
  const show = (p) => view.replaceChildren(
    el("dt", {}, "USDC payout address"), el("dd", { class: "mono", "data-field": "payoutAddress" }, p.payoutAddress ?? "not saved yet"),
    el("dt", {}, "Token deposit address"), el("dd", { class: "mono" }, p.depositAddress),
    el("dt", {}, "EVM deposit address"), el("dd", { class: "mono" }, p.evmAddress),
    el("dt", {}, "Your fee"), el("dd", {}, `${pct(p.redeemFeeBps)}${p.redeemFeeBps !== p.defaultRedeemFeeBps ? ` (the desk's is ${pct(p.defaultRedeemFeeBps)})` : ""}`))
  show(account.payout)
  const input = el("input", { type: "text", name: "payoutAddress", autocomplete: "off", spellcheck: "false", placeholder: "0x…" })
  const form = el("form", { onsubmit: async (e) => {
    e.preventDefault()
    try {
      show(await api("/api/app/payout-address", { method: "POST", body: { payoutAddress: input.value.trim() } }))
      status.info("Saved: orders that name no payout address pay here.")
      form.reset()
    } catch (err) {
      status.error(err)
    }
  } }, field("New USDC payout address", input, "An EVM address (ethereum, base, bsc)"), el("button", { type: "submit" }, "Save"), status)
  const reload = () => api("/api/app/account").then((a) => show(a.payout)).catch((e) => status.error(e))
  return Object.assign(section("Payout address", view, form), { reload })
}

const txidRows = (o) => [
  ["Deposit", o.depositTxid], ["Mint", o.mintTxid], ["Burn", o.burnTxid], ["Payout", o.payoutTxid], ["Refund", o.refundTxid],
  ...o.legs.map((l) => [`${l.leg} leg (${l.chain})`, l.txid])
].filter(([, txid]) => txid)

const orderCard = (o) => el("li", { "data-order": o.shortRef },
  el("div", { class: "order" },
    el("div", {}, el("strong", {}, `${o.kind} ${o.amount} ${o.asset}`), ` → ${o.payoutAmount} · `, el("span", { "data-field": "status" }, o.status.replace(/_/g, " "))),
    el("div", { class: "muted" }, `${o.shortRef} · ${o.chain || o.network} · created ${when(o.createdAt)}${o.confirmations ? ` · ${o.confirmations}/${o.requiredConfirmations} confirmations` : ""}`),
    el("div", { class: "muted" }, "Send to ", el("span", { class: "mono" }, o.depositAddress)),
    o.failure ? el("p", { class: "error" }, o.failure) : null,
    el("details", {},
      el("summary", {}, "History and transactions"),
      el("ol", { class: "history" }, ...o.history.map((h) => el("li", {},
        `${when(h.at)}: ${h.event.replace(/_/g, " ")}${h.source !== "desk" ? ` (from ${h.source})` : ""}`,
        h.txid ? el("span", { class: "mono" }, ` ${h.txid}`) : null))),
      el("dl", { class: "kv" }, ...txidRows(o).flatMap(([name, txid]) => [el("dt", {}, name), el("dd", { class: "mono", "data-txid": txid }, txid)])))))

const ordersSection = () => {
  const list = el("ul", { class: "rows", "aria-label": "Orders", "aria-live": "polite" })
  const status = notice()
  const open = new Set()
  const refresh = async () => {
    // Keep the details a person opened open across refreshes.
    for (const d of list.querySelectorAll("li[data-order]")) if (d.querySelector("details")?.open) open.add(d.dataset.order)
    const { orders } = await api("/api/app/orders")
    list.replaceChildren(...(orders.length === 0 ? [el("li", {}, "No orders yet. Orders made with your partner keys show here.")] : orders.map((o) => {
      const card = orderCard(o)
      if (open.has(o.shortRef)) card.querySelector("details").open = true
      return card
    })))
    status.clear()
  }
  const tick = () => refresh().catch((e) => status.error(e))
  tick()
  setInterval(tick, ORDERS_POLL_MS)
  return section("Orders", list, status)
}

const home = async () => {
  const session = await requireSession()
  const main = shell(title, session)
  const account = await api("/api/app/account")
  const rewards = rewardsSection()
  const keys = keysSection()
  const payout = payoutSection(account)
  // Linking fills the payout addresses and turns the member's keys over.
  const linked = () => [rewards, keys, payout].forEach((s) => s.reload())
  main.append(el("h1", {}, "Your token desk account"), walletSection(account, linked), rewards, keys, payout, ordersSection(), sessionsSection())
}

run(location.pathname.startsWith("/app/sign-in") ? () => signInPage(title) : home)
