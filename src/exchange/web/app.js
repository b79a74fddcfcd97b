// The exchange web app (issue 24): sign-in, then API keys (create with scopes, IP allowlist and
// label, the secret shown once; list; revoke), authorizations (grant an asset with a cap and an
// expiry; the delegated address with its payment QR and the amount to send; the funded balance
// and a countdown updating live; "end now", which expires the grant and sweeps the rest back),
// open orders and trades with their legs, txids and confirmations updating live. Built only on
// the exchange's session routes (/api/app/…, in its OpenAPI). Plain JavaScript.
import { api, countdown, el, field, notice, qrCode, requireSession, run, section, sessionsSection, shell, signInPage } from "../../platform/webapp/client/common.js"

const title = "Exchange"
/** Live views refresh at the spec's polling rate. */
const POLL_MS = 2000

const keysSection = () => {
  const list = el("ul", { class: "rows", "aria-label": "API keys" })
  const status = notice()
  const shown = el("div")
  const load = async () => {
    const { keys } = await api("/api/app/keys")
    list.replaceChildren(...(keys.length === 0 ? [el("li", {}, "No API keys yet.")] : keys.map((k) => el("li", { "data-key": k.apiKey },
      el("div", {}, el("div", { class: "mono" }, k.apiKey),
        el("div", { class: "muted" }, `${k.label ? `${k.label} · ` : ""}${k.scopes.join(" + ")}${k.ipAllowlist.length ? ` · only from ${k.ipAllowlist.join(", ")}` : " · any IP"}`)),
      el("button", { type: "button", class: "danger", onclick: async () => {
        try {
          await api(`/api/app/keys/${encodeURIComponent(k.apiKey)}`, { method: "DELETE" })
          status.info("The key was revoked on every node.")
          await load()
        } catch (e) {
          status.error(e)
        }
      } }, "Revoke")))))
  }
  const read = el("input", { type: "checkbox", name: "read", checked: true })
  const trade = el("input", { type: "checkbox", name: "trade" })
  const ips = el("input", { type: "text", name: "ipAllowlist", placeholder: "203.0.113.7, 2001:db8::1", autocomplete: "off" })
  const label = el("input", { type: "text", name: "label", maxlength: "64", autocomplete: "off" })
  const form = el("form", { onsubmit: async (e) => {
    e.preventDefault()
    const scopes = [read.checked ? "read" : null, trade.checked ? "trade" : null].filter(Boolean)
    if (scopes.length === 0) return status.error("Choose at least one scope: read or trade.")
    try {
      const created = await api("/api/app/keys", { method: "POST", body: {
        scopes, label: label.value.trim() || undefined,
        ipAllowlist: ips.value.split(",").map((s) => s.trim()).filter((s) => s !== "")
      } })
      shown.replaceChildren(el("div", { class: "secret", role: "alert", id: "new-key" },
        el("p", {}, el("strong", {}, "Copy the secret now: it is never shown again.")),
        el("dl", { class: "kv" }, el("dt", {}, "API key"), el("dd", { class: "mono", "data-field": "apiKey" }, created.apiKey),
          el("dt", {}, "Secret"), el("dd", { class: "mono", "data-field": "secretKey" }, created.secretKey))))
      status.clear()
      form.reset()
      await load()
    } catch (err) {
      status.error(err)
    }
  } },
  el("fieldset", {}, el("legend", {}, "Scopes"),
    el("label", {}, read, " read"), " ", el("label", {}, trade, " trade")),
  field("IP allowlist", ips, "Optional, comma separated; empty: any IP"), field("Label", label),
  el("button", { type: "submit" }, "Create key"), status)
  load().catch((e) => status.error(e))
  return section("API keys", form, shown, list)
}

const authorizationsSection = () => {
  const list = el("div", { "aria-live": "polite" })
  const status = notice()
  const cards = new Map()
  const ended = new Set()
  const asset = el("input", { type: "text", name: "asset", required: true, autocomplete: "off", placeholder: "SHRD" })
  const cap = el("input", { type: "text", name: "cap", required: true, inputmode: "decimal", placeholder: "100" })
  const expires = el("select", { name: "expiresIn" }, ...[["15m", "15 minutes"], ["1h", "1 hour"], ["1d", "1 day"], ["7d", "7 days"]].map(([v, t]) => el("option", { value: v }, t)))
  const card = async (a) => {
    const funded = el("strong", { "data-field": "funded" })
    const used = el("span", { "data-field": "used" })
    const toSend = el("strong", { "data-field": "toSend" })
    const toSendLine = el("span")
    const qrBox = el("div")
    let shownUri = ""
    const node = el("article", { class: "card", "data-authorization": a.asset },
      el("h3", {}, `${a.asset}: up to ${a.cap}`),
      el("p", {}, "Funded: ", funded, ` ${a.asset} · used `, used, " · ends in ", countdown(a.expiresAt)),
      el("p", {}, toSendLine),
      el("p", { class: "mono", "data-field": "delegatedAddress" }, a.delegatedAddress),
      qrBox,
      el("p", {}, el("button", { type: "button", class: "danger", onclick: async (e) => {
        e.target.disabled = true
        status.info(`Ending the ${a.asset} authorization and sweeping the rest back…`)
        try {
          await api(`/api/app/authorizations/${encodeURIComponent(a.asset)}/end`, { method: "POST" })
          // The grant's listing may still show it for a moment while the sweep starts: the user ended it, so it goes now.
          ended.add(`${a.asset}:${a.delegatedAddress}`)
          status.info(`The ${a.asset} authorization has ended; what was left is on its way back to your address.`)
          await refresh()
        } catch (err) {
          e.target.disabled = false
          status.error(err)
        }
      } }, "End now")))
    const update = async (x) => {
      funded.textContent = x.funded ?? "…"
      used.textContent = x.used
      toSend.textContent = x.toSend
      toSendLine.replaceChildren(...(x.toSend === "0"
        ? ["Fully funded: nothing more to send (", toSend, ` ${x.asset} to go). More sent to the delegated address comes back when the grant ends.`]
        : ["Send ", toSend, ` ${x.asset} from your own wallet to the delegated address (the cap, less what is there and what trades spent):`]))
      // The QR asks for what is still to send: drawn again only when that changes.
      if (x.paymentUri !== shownUri) {
        shownUri = x.paymentUri
        qrBox.replaceChildren(await qrCode(x.paymentUri, `Payment QR code: ${x.toSend} ${x.asset} to ${x.delegatedAddress}`))
      }
    }
    return { node, update }
  }
  const refresh = async () => {
    const { authorizations } = await api("/api/app/authorizations")
    const live = new Set()
    for (const a of authorizations) {
      const key = `${a.asset}:${a.delegatedAddress}`
      if (ended.has(key)) continue
      live.add(key)
      if (!cards.has(key)) cards.set(key, await card(a))
      await cards.get(key).update(a)
    }
    for (const key of [...cards.keys()]) if (!live.has(key)) cards.delete(key)
    list.replaceChildren(...(cards.size === 0 ? [el("p", { class: "muted" }, "No live authorizations.")] : [...cards.values()].map((c) => c.node)))
  }
  const form = el("form", { onsubmit: async (e) => {
    e.preventDefault()
    try {
      await api("/api/app/authorizations", { method: "POST", body: { asset: asset.value.trim(), cap: cap.value.trim(), expiresIn: expires.value } })
      status.info(`Authorized. Fund it by sending ${asset.value.trim().toUpperCase()} to the delegated address below.`)
      form.reset()
      await refresh()
    } catch (err) {
      status.error(err)
    }
  } }, field("Asset", asset), field("Cap", cap, "The most a bot may trade with this grant"), field("Expires in", expires),
  el("button", { type: "submit" }, "Authorize"), status)
  const tick = () => refresh().catch((e) => status.error(e))
  tick()
  setInterval(tick, POLL_MS)
  return section("Authorizations", form, list)
}

/** One settlement leg: what moves where, its state, its confirmations and its txid once sent. */
const legRow = (l) =>
  el("li", { class: "muted", "data-leg": l.asset },
    `${l.amount} ${l.asset} → ${l.to}: ${l.status}, `, el("span", { "data-field": "confirmations" }, String(l.confirmations)), " confirmations ",
    l.txid ? el("span", { class: "mono", "data-field": "txid" }, l.txid) : "(not sent yet)")

const activitySection = () => {
  const orders = el("ul", { class: "rows", "aria-label": "Open orders" })
  const trades = el("ul", { class: "rows", "aria-label": "Trades" })
  const status = notice()
  const refresh = async () => {
    const a = await api("/api/app/activity")
    orders.replaceChildren(...(a.openOrders.length === 0 ? [el("li", {}, "No open orders.")] : a.openOrders.map((o) =>
      el("li", { "data-order": o.orderId }, `${o.side} ${o.origQty} ${o.symbol} at ${o.price} · ${o.status} (filled ${o.executedQty})`))))
    trades.replaceChildren(...(a.trades.length === 0 ? [el("li", {}, "No trades yet.")] : a.trades.map((t) =>
      el("li", { "data-trade": t.id }, el("div", {}, `${t.isBuyer ? "Bought" : "Sold"} ${t.qty} ${t.symbol} at ${t.price}`,
        el("ul", { "aria-label": "Settlement legs" }, ...(t.legs ?? []).map(legRow)))))))
  }
  const tick = () => refresh().catch((e) => status.error(e))
  tick()
  setInterval(tick, POLL_MS)
  return section("Orders and trades", el("h3", {}, "Open orders"), orders, el("h3", {}, "Trades"), trades, status)
}

const home = async () => {
  const session = await requireSession()
  const main = shell(title, session)
  main.append(el("h1", {}, "Your exchange account"), authorizationsSection(), keysSection(), activitySection(), sessionsSection())
}

run(location.pathname.startsWith("/app/sign-in") ? () => signInPage(title) : home)
